"""protect(): what the wrapper itself guarantees, whatever the verifier does."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcpkit.auth import AccessToken, InvalidToken, VerifierUnavailable, protect

pytestmark = pytest.mark.anyio

RESOURCE = "https://mcp.test/mcp"


class Careless:
    """A verifier that accepts everything and reports the audience it is told to (or fails as told)."""

    def __init__(self, audience: tuple[str, ...] = (RESOURCE,), fail: Exception | None = None) -> None:
        self.audience, self.fail = audience, fail

    async def verify(self, token: str) -> AccessToken:
        if self.fail is not None:
            raise self.fail
        return AccessToken("s", "c", frozenset({"mcp:tools"}), None, self.audience)


async def ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"reached"})


async def call(verifier: Any, method: str = "POST", path: str = "/mcp", **headers: str) -> httpx.Response:
    app = protect(ok, verifier=verifier, resource=RESOURCE, authorization_servers=["https://as.test"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="https://mcp.test") as http:
        return await http.request(method, path, headers={"authorization": "Bearer t", **headers})


async def test_a_token_for_another_audience_is_refused_even_when_the_verifier_forgets_to_check() -> None:
    answer = await call(Careless(audience=("https://other.test/api",)))
    assert answer.status_code == 401 and answer.json()["error"] == "invalid_token"
    assert (await call(Careless(audience=()))).status_code == 401
    assert (await call(Careless())).text == "reached"


async def test_an_invalid_token_is_401_and_an_unavailable_verifier_503() -> None:
    invalid = await call(Careless(fail=InvalidToken("revoked")))
    assert invalid.status_code == 401 and 'error_description="revoked"' in invalid.headers["www-authenticate"]
    down = await call(Careless(fail=VerifierUnavailable("AS down")))
    assert down.status_code == 503 and "www-authenticate" not in down.headers


async def test_every_path_but_the_metadata_is_protected() -> None:
    app = protect(ok, verifier=Careless(), resource=RESOURCE, authorization_servers=["https://as.test"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="https://mcp.test") as http:
        other = await http.get("/anything")
        metadata = await http.get("/.well-known/oauth-protected-resource/mcp")
        preflight = await http.options("/.well-known/oauth-protected-resource")
    assert other.status_code == 401
    assert metadata.status_code == 200 and metadata.json()["resource"] == RESOURCE
    assert (
        preflight.status_code == 204
        and preflight.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
    )
