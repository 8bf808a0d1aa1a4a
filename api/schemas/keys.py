"""Response shapes of /v1/keys."""
from __future__ import annotations

from pydantic import BaseModel, Field


class KeyOut(BaseModel):
    id: str = Field(description="The key's prefix; pass it to DELETE /v1/keys/{key_id}.")
    prefix: str = Field(description="The key's first 16 characters, to tell keys apart.")
    created_at: str | None
    revoked_at: str | None = Field(description="When it was revoked; null while it works.")


class KeyList(BaseModel):
    items: list[KeyOut]
    key_cache_s: float = Field(description="How long API processes remember a key. A "
                                           "revoked key is refused from the next request; "
                                           "only while Redis is unreachable may it be "
                                           "accepted this many seconds more.")
