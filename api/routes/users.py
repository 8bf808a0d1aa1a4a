"""/v1/users (admins and owners) and /v1/me (anyone): the tenant's people."""
from __future__ import annotations

from flask import Blueprint, Response, g

from api.acting import current_principal
from api.auth import authenticate
from api.authz import actor, require
from api.limits import limit_requests
from api.request_parsing import parse_body, parse_query
from api.resources import resources
from api.schemas.users import MeOut, UserCreate, UserList, UserListQuery, UserOut, UserPatch
from api.services import users as user_service
from api.spec import spec
from shared.access_generation import bump
from shared.models import User

bp = Blueprint("users", __name__, url_prefix="/v1")
bp.before_request(authenticate)
bp.before_request(limit_requests)


def _admin():
    return require(role="admin", scope="admin")


@spec.doc("GET", "/v1/users", "The tenant's users, in order of creation (cursor "
          "pagination). Admins and owners.", query=UserListQuery,
          responses={200: UserList}, tag="users")
@bp.get("/users")
def list_users():
    _admin()
    query = parse_query(UserListQuery)
    with resources().session() as s:
        return user_service.list_users(s, g.tenant_id, limit=query.limit, cursor=query.cursor)


@spec.doc("POST", "/v1/users", "Add a user (admins; only owners add owners).",
          body=UserCreate, responses={201: UserOut, 409: None}, tag="users")
@bp.post("/users")
def create_user():
    principal = _admin()
    body = parse_body(UserCreate)
    with resources().session() as s:
        return user_service.create_user(s, principal, body, actor()), 201


@spec.doc("GET", "/v1/users/{user_id}", "One user.", responses={200: UserOut}, tag="users")
@bp.get("/users/<int:user_id>")
def get_user(user_id: int):
    principal = _admin()
    with resources().session() as s:
        return user_service.user_view(user_service.load_user(s, principal, user_id))


@spec.doc("PATCH", "/v1/users/{user_id}", "Change a user's email, role, groups, attributes "
          "or disable them (admins; only owners change owners). Every API process acts "
          "on the new values from the next request.", body=UserPatch,
          responses={200: UserOut}, tag="users")
@bp.patch("/users/<int:user_id>")
def patch_user(user_id: int):
    principal = _admin()
    body = parse_body(UserPatch)
    res = resources()
    with res.session() as s:
        view = user_service.update_user(s, principal, user_id, body, actor())
    bump(res.redis, principal.tenant_id)
    return view


@spec.doc("DELETE", "/v1/users/{user_id}", "Delete a user with their personal keys and "
          "sessions; their conversations and jobs stay (admins see them).",
          responses={204: None}, tag="users")
@bp.delete("/users/<int:user_id>")
def delete_user(user_id: int):
    principal = _admin()
    res = resources()
    with res.session() as s:
        user_service.delete_user(s, principal, user_id, actor())
    bump(res.redis, principal.tenant_id)
    return Response(status=204)


@spec.doc("GET", "/v1/me", "Who this request acts as: the user (null for a service key "
          "acting for the tenant), the role and the key's scopes.", responses={200: MeOut},
          tag="users")
@bp.get("/me")
def me():
    principal = current_principal()
    user = None
    if principal.user_id is not None:
        with resources().session() as s:
            row = s.get(User, principal.user_id)
            user = user_service.user_view(row) if row is not None else None
    return {"tenant_id": principal.tenant_id, "user": user, "role": principal.role,
            "scopes": sorted(principal.scopes)}
