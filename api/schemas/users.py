"""Request and response shapes of /v1/users, /v1/me and /v1/audit."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from api.schemas.common import Strict

Role = Literal["viewer", "analyst", "admin", "owner"]
Attribute = str | int | float | list[str | int | float]


class UserCreate(Strict):
    external_id: str = Field(min_length=1, max_length=200, description="Your app's or your "
                             "identity provider's id for the person; Sunrise-User names it.")
    email: str | None = Field(default=None, max_length=320)
    role: Role = "viewer"
    groups: list[str] = Field(default_factory=list, max_length=100)
    attributes: dict[str, Attribute] = Field(default_factory=dict, max_length=100,
                                             description="Values row policies bind, "
                                             "e.g. {\"region\": \"EU\"}.")


class UserPatch(Strict):
    email: str | None = Field(default=None, max_length=320)
    role: Role | None = None
    groups: list[str] | None = Field(default=None, max_length=100)
    attributes: dict[str, Attribute] | None = Field(default=None, max_length=100)
    disabled: bool | None = None


class UserOut(BaseModel):
    user_id: int
    external_id: str
    email: str | None
    role: Role
    groups: list[str]
    attributes: dict[str, Any]
    disabled: bool
    created_at: str | None


class UserList(BaseModel):
    items: list[UserOut]
    next_cursor: str | None


class UserListQuery(Strict):
    limit: int = Field(default=100, ge=1, le=500)
    cursor: str | None = Field(default=None, pattern=r"^\d{1,19}$")


class MeOut(BaseModel):
    tenant_id: int
    user: UserOut | None = Field(description="Null: a service key acting for the tenant.")
    role: Role
    scopes: list[str]


class AuditQuery(Strict):
    from_: str | None = Field(default=None, alias="from", description="ISO 8601, inclusive.")
    to: str | None = Field(default=None, description="ISO 8601, exclusive.")
    user: str | None = Field(default=None, max_length=200, description="An external id.")
    action: str | None = Field(default=None, max_length=64)
    limit: int = Field(default=100, ge=1, le=1000)
    cursor: str | None = Field(default=None, pattern=r"^\d{1,19}$")


class AuditEntryOut(BaseModel):
    id: int
    at: str
    user_id: int | None
    actor: str
    action: str
    target: str | None
    details: dict[str, Any] | None


class AuditList(BaseModel):
    items: list[AuditEntryOut]
    next_cursor: str | None
