"""OpenID Connect sign-in routes: ``/auth/config``, ``/auth/oidc/login``,
``/auth/oidc/callback``; sign-out is ``POST /v1/sign-out`` (``api/routes/sign_in.py``).

The callback provisions the person from the verified ID token (``shared/oidc_claims``,
``shared/people.upsert_user``) and starts the console session (``api/sessions``), which
records the sign-in in the audit log. Every failed check answers 401 problem+json and
changes nothing: no user, no session.
"""
from __future__ import annotations

import logging

from authlib.integrations.base_client import MismatchingStateError, OAuthError
from flask import Blueprint, redirect, request, session, url_for
from joserfc.errors import JoseError
from requests import RequestException

from api.resources import resources
from api.sessions import start_session
from api.signin.oidc_client import CLOCK_LEEWAY_S, oidc_client
from api.signin.return_to import checked_return_to
from shared.access_generation import bump
from shared.errors import NotFound, ServiceUnavailable, Unauthorized
from shared.keys import get_or_create_tenant
from shared.oidc_claims import user_fields
from shared.people import upsert_user

logger = logging.getLogger(__name__)

bp = Blueprint("signin", __name__)
RETURN_TO = "return_to:"


@bp.get("/auth/config")
def config():
    """What the console needs to offer sign-in (no secrets)."""
    enabled = resources().settings.oidc_enabled
    return {"oidc": enabled, "sign_in_url": url_for("signin.login") if enabled else None}


@bp.get("/auth/oidc/login")
def login():
    """Send the browser to the provider (code flow, PKCE S256, state, nonce);
    ``?return_to=/path`` is where the callback lands, a path of this site only."""
    client = _client()
    return_to = checked_return_to(request.args.get("return_to"))
    try:
        rv = client.create_authorization_url(_redirect_uri())
    except RequestException as exc:
        raise _unreachable(exc) from exc
    client.save_authorize_data(redirect_uri=_redirect_uri(), **rv)
    session[RETURN_TO + rv["state"]] = return_to
    return redirect(rv["url"])


@bp.get("/auth/oidc/callback")
def callback():
    """Check the provider's answer, provision the person, start their session."""
    client, settings = _client(), resources().settings
    return_to = session.pop(RETURN_TO + request.args.get("state", ""), "/")
    try:
        token = client.authorize_access_token(leeway=CLOCK_LEEWAY_S)
    except (OAuthError, JoseError) as exc:
        logger.info("OIDC sign-in refused: %r", exc)
        raise Unauthorized(f"Sign-in failed: {_reason(exc)}. Start again from the "
                           "console.") from exc
    except RequestException as exc:
        raise _unreachable(exc) from exc
    claims = token.get("userinfo")
    if not claims or not claims.get("sub"):
        raise Unauthorized("Sign-in failed: the provider sent no ID token.")
    fields = user_fields(claims, settings)
    with resources().session() as s:
        tenant_id = get_or_create_tenant(s, settings.oidc_tenant).id
        user_id = upsert_user(s, tenant_id, **fields).id
    # The provider's claims may have changed the user's role or groups.
    bump(resources().redis, tenant_id)
    response = redirect(checked_return_to(return_to), code=303)
    # The callback URL carries the code: keep it out of caches and of the next Referer.
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    start_session(response, tenant_id, user_id, method="oidc")
    return response


def _client():
    client = oidc_client()
    if client is None:
        raise NotFound("OpenID Connect sign-in is not configured on this server "
                       "(SUNRISE_OIDC_ISSUER, SUNRISE_OIDC_CLIENT_ID, SUNRISE_OIDC_CLIENT_SECRET).")
    return client


def _redirect_uri() -> str:
    return resources().settings.oidc_redirect_uri or url_for("signin.callback", _external=True)


def _reason(exc: Exception) -> str:
    if isinstance(exc, MismatchingStateError):
        return ("this answer's state is unknown, expired or already used (a callback replayed, "
                "or begun in another browser)")
    if isinstance(exc, OAuthError):
        return exc.description or exc.error or "the provider's answer was refused"
    return f"the ID token was refused ({exc})"


def _unreachable(exc: Exception) -> ServiceUnavailable:
    logger.warning("OIDC provider unreachable: %r", exc)
    return ServiceUnavailable("The sign-in provider did not answer; try again shortly.",
                              retry_after=5)
