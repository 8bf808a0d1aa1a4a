"""The web console: a static single-page shell at ``GET /`` plus its assets.

The shell needs no authentication; the page's scripts send the API key the
user types in with every API call. Nothing here renders templates or touches
the database, so the console adds no load beyond serving a few files.
"""

from flask import Blueprint, Response, request, send_from_directory

bp = Blueprint("console", __name__, static_folder="static", static_url_path="/static")

# vega-embed is told to interpret Vega expressions (``ast: true``) so scripts
# never need 'unsafe-eval'; the chart libraries set inline styles, hence
# 'unsafe-inline' for styles only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)

# The shell and the console's own scripts change with every deploy under the
# same URLs, so browsers must revalidate them (ETag / Last-Modified make that
# a cheap 304). Vendored libraries change only when re-vendored.
REVALIDATE = "no-cache"
VENDOR_MAX_AGE = "public, max-age=86400"


@bp.get("/")
def index() -> Response:
    """Serve the console shell; always revalidated, never framed."""
    response = send_from_directory(bp.static_folder, "index.html")
    response.headers["Cache-Control"] = REVALIDATE
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.after_app_request
def _static_cache_headers(response: Response) -> Response:
    """Give console assets explicit cache rules.

    Registered app-wide because an app whose own static folder is this one
    serves ``/static/...`` through its ``static`` endpoint, not ours.
    """
    if request.endpoint in ("static", "console.static") and response.status_code < 400:
        filename = (request.view_args or {}).get("filename", "")
        vendored = filename.startswith("vendor/")
        response.headers["Cache-Control"] = VENDOR_MAX_AGE if vendored else REVALIDATE
        response.headers["X-Content-Type-Options"] = "nosniff"
    return response
