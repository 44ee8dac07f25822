"""The inspector answers only its own page: the token, the Host and the Origin are checked (CVE-2025-49596
was a proxy any web page could drive), and it never sends CORS headers."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from inspector.harness import EVERYTHING, Inspector, inspector
from mcpkit.inspector.guard import Guard


@pytest.fixture(scope="module")
def running() -> Iterator[Inspector]:
    with inspector(f"{sys.executable} {EVERYTHING}") as found:
        yield found


def post(found: Inspector, headers: dict[str, str], action: str = "state") -> httpx.Response:
    return httpx.post(f"{found.base}/api/{action}", json={}, headers=headers, timeout=10)


def test_the_page_and_the_api_with_the_token_are_served(running: Inspector) -> None:
    page = httpx.get(running.url, timeout=10)
    assert page.status_code == 200 and "mcpkit inspector" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert post(running, {"authorization": f"Bearer {running.token}"}).status_code == 200


@pytest.mark.parametrize("token", [None, "", "wrong"])
def test_a_request_without_the_right_token_is_refused(running: Inspector, token: str | None) -> None:
    headers = {} if token is None else {"authorization": f"Bearer {token}".strip()}
    assert post(running, headers, "call").status_code == 403
    assert httpx.get(f"{running.base}/?token={token or ''}", timeout=10).status_code == 403
    assert httpx.get(f"{running.base}/api/events?token={token or ''}", timeout=10).status_code == 403


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1:1", "localhost"])
def test_a_foreign_host_is_refused_even_with_the_token(running: Inspector, host: str) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: its Host header gives it away."""
    headers = {"authorization": f"Bearer {running.token}", "host": host}
    assert post(running, headers).status_code == 403
    assert httpx.get(running.url, headers={"host": host}, timeout=10).status_code == 403


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://localhost"])
def test_a_foreign_origin_is_refused_even_with_the_token(running: Inspector, origin: str) -> None:
    headers = {"authorization": f"Bearer {running.token}", "origin": origin}
    response = post(running, headers)
    assert response.status_code == 403
    assert not any(name.lower().startswith("access-control-") for name in response.headers)


def test_the_own_origin_and_localhost_are_let_through(running: Inspector) -> None:
    for origin in (running.base, f"http://localhost:{running.port}"):
        assert (
            post(running, {"authorization": f"Bearer {running.token}", "origin": origin}).status_code == 200
        )
    headers = {"authorization": f"Bearer {running.token}", "host": f"localhost:{running.port}"}
    assert post(running, headers).status_code == 200


def test_a_form_post_that_is_not_json_is_refused(running: Inspector) -> None:
    """A cross-site HTML form can send text/plain without a preflight; only JSON is taken."""
    response = httpx.post(
        f"{running.base}/api/state?token={running.token}",
        content=b"{}",
        headers={"content-type": "text/plain"},
        timeout=10,
    )
    assert response.status_code == 403


def test_cross_site_fetch_metadata_is_refused() -> None:
    guard = Guard(8000, "t")
    base = {"host": "127.0.0.1:8000", "authorization": "Bearer t", "content-type": "application/json"}
    assert guard.refusal("POST", "/api/state", b"", base) is None
    assert guard.refusal("POST", "/api/state", b"", {**base, "sec-fetch-site": "cross-site"}) is not None


def test_the_inspector_listens_on_loopback_only() -> None:
    from mcpkit.inspector.serving import bind

    with bind() as sock:
        assert sock.getsockname()[0] == "127.0.0.1"


def test_a_port_in_use_is_one_usage_line() -> None:
    import subprocess
    import sys

    from inspector.harness import ENV
    from mcpkit.inspector.serving import bind

    with bind() as taken:
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit.cli", "inspect", "--no-browser", "--port", port],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=60,
        )
    assert done.returncode == 2
    assert done.stderr.strip() == f"mcpkit: cannot listen on 127.0.0.1:{port}: Address already in use"
