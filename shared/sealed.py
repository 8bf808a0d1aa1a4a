"""Secrets the service keeps in its database -- a live dataset's URL, with its password --
are sealed there with Fernet (``cryptography``: AES-128-CBC with an HMAC-SHA256 tag).

``SUNRISE_SECRET_KEYS`` holds one or more Fernet keys, comma-separated: the first
seals, every one of them opens, so a key is rotated by putting a new one first, then
re-sealing (``sunrise datasets reseal``), then dropping the old one. The development
default is a fixed, public key; production refuses it (``shared/config.py``).

A stored value is ``fernet:<token>``; one without the prefix was written before
sealing existed and is read as it is (and sealed again by ``reseal``).
"""
from __future__ import annotations

import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

PREFIX = "fernet:"
# Public on purpose: development and tests only; production refuses it.
DEV_SECRET_KEYS = "c3VucmlzZS1kZXZlbG9wbWVudC1rZXktbm90LXNlY3I="


class UnreadableSecret(Exception):
    """A sealed value none of the configured keys opens."""


def seal(keys: str, secret: str) -> str:
    return PREFIX + _box(keys).encrypt(secret.encode()).decode()


def unseal(keys: str, stored: str) -> str:
    """The secret in ``stored``; raises UnreadableSecret when no key opens it."""
    if not stored.startswith(PREFIX):
        return stored  # written before sealing
    try:
        return _box(keys).decrypt(stored[len(PREFIX):].encode()).decode()
    except InvalidToken:
        raise UnreadableSecret("No key in SUNRISE_SECRET_KEYS opens this stored secret: "
                               "was the key that sealed it removed?") from None


def check_keys(keys: str) -> None:
    """Raises ValueError, naming which, when a key is not a Fernet key."""
    _box(keys)


@functools.cache
def _box(keys: str) -> MultiFernet:
    fernets = []
    for number, key in enumerate((k.strip() for k in keys.split(",") if k.strip()), 1):
        try:
            fernets.append(Fernet(key))
        except ValueError:
            raise ValueError(f"key {number} of SUNRISE_SECRET_KEYS is not a Fernet key (32 "
                             "url-safe base64-encoded bytes; make one with `python -c 'from "
                             "cryptography.fernet import Fernet; print(Fernet.generate_key()"
                             ".decode())'`)") from None
    if not fernets:
        raise ValueError("SUNRISE_SECRET_KEYS holds no key")
    return MultiFernet(fernets)
