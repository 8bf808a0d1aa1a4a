"""Local console sign-in without OpenID Connect: a one-time link starts a session.

``sunrise users create`` prints ``/v1/sign-in/<token>``; opening it signs the person in
(``api/sessions.py``) and sends them to the console. ``POST /v1/sign-out`` ends the
session; made with the session cookie it needs the CSRF header like every change.
"""
from __future__ import annotations

import contextlib

from flask import Blueprint, Response, redirect, request

from api.resources import resources
from api.sessions import SESSION_COOKIE, end_session, session_user, start_session
from api.spec import spec
from shared.errors import NotFound, Unauthorized
from shared.people import redeem_sign_in_link

bp = Blueprint("sign_in", __name__, url_prefix="/v1")


@spec.doc("GET", "/v1/sign-in/{token}", "Open a one-time sign-in link: starts a console "
          "session (cookie) and redirects to the console. A used or expired link is 404.",
          responses={303: None}, tag="users")
@bp.get("/sign-in/<token>")
def sign_in(token: str):
    if len(token) > 100:
        raise NotFound("This sign-in link is unknown, used or expired.")
    with resources().session() as s:
        user = redeem_sign_in_link(s, token)
        found = (user.tenant_id, user.id) if user is not None else None
    if found is None:
        raise NotFound("This sign-in link is unknown, used or expired; ask an admin for "
                       "a new one (sunrise users create).")
    response = redirect("/", code=303)
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    start_session(response, *found, method="link")
    return response


@spec.doc("POST", "/v1/sign-out", "End the console session and clear its cookies "
          "(X-CSRF-Token required).", responses={204: None}, tag="users")
@bp.post("/sign-out")
def sign_out():
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        # A live session: the CSRF header must match. One already ended or expired
        # leaves only the cookies to clear.
        with contextlib.suppress(Unauthorized):
            session_user(token)
    response = Response(status=204)
    end_session(response)
    return response
