"""Pointed at a port where something else answers, the client and the CLI say that it is not
a Sunrise API, instead of relaying its 401 or 404 as if Sunrise had refused the key.

"Something else" is a real HTTP server on 127.0.0.1, started here, that answers every
request with one canned response; the real API's answers are the other side.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from shared.errors import PROBLEM_TYPE
from sunrise.cli.main import main
from sunrise.client import ApiError, NotSunriseApi, SunriseClient
from tests.utils.stub_http import stub_http

NGINX_404 = "<html><head><title>404 Not Found</title></head><body>nginx</body></html>"
OTHER_APIS = [  # (status, body, content type)
    (401, {"error": "unauthorized", "message": "Invalid token"}, "application/json"),
    (401, {"type": "about:blank", "title": "Unauthorized", "status": 401},
     "application/problem+json"),
    (404, NGINX_404, "text/html"),
    (200, "<!doctype html><html><body>Grafana</body></html>", "text/html"),
]
SUNRISE_401 = {"type": PROBLEM_TYPE + "unauthorized", "title": "Unauthorized", "status": 401,
               "detail": "The API key is unknown or revoked."}


@pytest.mark.parametrize(("status", "body", "content_type"), OTHER_APIS)
def test_the_client_says_what_answered_is_not_a_sunrise_api(status, body, content_type):
    with (stub_http(status, body, content_type=content_type) as other,
          SunriseClient(other.url, "sk-sunrise-x") as client,
          pytest.raises(NotSunriseApi) as caught):
        client.datasets()
    said = str(caught.value)
    assert said.startswith(f"the server at {other.url} is not a Sunrise API")
    assert f"answered {status} {content_type}" in said and "SUNRISE_API_URL" in said
    assert not isinstance(caught.value, ApiError)


def test_a_sunrise_problem_is_still_the_apis_own_error():
    with (stub_http(401, SUNRISE_401, content_type="application/problem+json") as api,
          SunriseClient(api.url, "sk-sunrise-x") as client,
          pytest.raises(ApiError) as caught):
        client.dataset("ds-1")
    assert caught.value.status == 401 and caught.value.problem == SUNRISE_401


@pytest.mark.parametrize("command", [["datasets", "list"], ["report", "{questions}", "-o",
                                                            "{out}"]])
def test_the_cli_says_so_and_exits_1(command, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("How many flights?\n")
    args = [a.format(questions=questions, out=tmp_path / "out.html") for a in command]
    with stub_http(401, {"error": "unauthorized"}) as other:
        done = CliRunner().invoke(main, [*args, "--api", other.url, "--key", "sk-sunrise-x"])
    assert done.exit_code == 1
    assert f"the server at {other.url} is not a Sunrise API (it answered 401" in done.output
    assert "unknown" not in done.output and "Traceback" not in done.output


def test_a_key_this_sunrise_api_does_not_know_says_which_api_refused_it():
    with stub_http(401, SUNRISE_401, content_type="application/problem+json") as api:
        done = CliRunner().invoke(main, ["datasets", "list", "--api", api.url,
                                         "--key", "sk-sunrise-x"])
    assert done.exit_code == 1
    assert "401: The API key is unknown or revoked." in done.output
    assert f"the Sunrise API at {api.url} does not accept this key" in done.output


@pytest.mark.parametrize(("method", "path", "status"), [
    ("get", "/v1/datasets", 401), ("get", "/v1/no-such-thing", 404),
    ("delete", "/v1/datasets", 405)])
def test_every_error_of_the_real_api_carries_sunrises_problem_type(client, method, path,
                                                                   status):
    resp = getattr(client, method)(path, headers={"Authorization": "Bearer sk-sunrise-nobody"})
    assert resp.status_code == status
    assert resp.get_json()["type"].startswith(PROBLEM_TYPE)


def test_an_event_stream_that_is_a_page_is_not_retried_but_named():
    with (stub_http(200, "<html><body>Sign in</body></html>") as other,
          SunriseClient(other.url, "sk-sunrise-x") as client,
          pytest.raises(NotSunriseApi) as caught):
        list(client.dataset_events("ds-1", reconnects=5))
    assert "answered 200 text/html" in str(caught.value)
    assert len(other.requests) == 1, "asked once, not again and again"
