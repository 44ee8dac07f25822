"""End to end: the official MCP Python SDK's OAuth client signs in through mcpkit's authorization server,
which fronts an upstream identity provider without dynamic registration (npm oidc-provider), and calls a
tool on the protected mcpkit server. A real headless chromium (Chrome DevTools protocol) shows mcpkit's
consent page, whose screenshot is kept, allows it, and signs in on the provider's login and consent pages.

The SDK registers itself with mcpkit (RFC 7591): only mcpkit's own client is known to the provider."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx2
import identity_harness
import pytest
from anyio.streams.text import TextReceiveStream
from auth_server import NPM_DIR, node
from identity_harness import RESOURCE, running_proxy
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

import peers
from inspector.cdp import Browser, chromium
from inspector.page import click, fill
from mcpkit.transports.http_server.asgi import respond

upstream = identity_harness.upstream
pytestmark = [pytest.mark.interop, pytest.mark.anyio]
TS_CLIENT = Path(__file__).with_name("ts_oauth_client.mjs")
warnings.filterwarnings("ignore", category=UserWarning)


@pytest.fixture
def chrome() -> Iterator[Browser]:
    """A fresh headless chromium per test: no provider session carried from another test."""
    binary = chromium()
    if binary is None:
        message = "chromium not installed (apt-get install chromium)"
        if os.environ.get("MCPKIT_CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"{message}; CI must not skip the browser tests")
        pytest.skip(message)
    found = Browser(binary)
    yield found
    found.close()


class Storage:
    """The SDK's TokenStorage in memory, empty: the SDK registers with mcpkit."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Loopback:
    """The client's redirect listener: a real server on loopback that records the answer it receives."""

    def __init__(self) -> None:
        self.port = peers.free_port()
        self.url = f"http://127.0.0.1:{self.port}/callback"
        self.answers: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/callback":  # not the browser's /favicon.ico
            query = parse_qs(scope["query_string"].decode())
            self.answers.append({k: v[0] for k, v in query.items()})
        await respond(
            send,
            200,
            b"<p id=done>Signed in; you can close this page.</p>",
            [(b"content-type", b"text/html")],
        )


def sign_in_in_chromium(page: Browser, url: str, back_to: str, shot: Path, client_name: str) -> None:
    """What the user does: reads and allows mcpkit's consent page, then signs in at the provider."""
    page.goto(url)
    page.wait_for("document.querySelector('#approve') !== null")
    page.wait_for(f"document.body.innerText.includes({json.dumps(client_name)})")
    page.screenshot(shot)
    click(page, "#approve")
    try:
        page.wait_for("document.querySelector('input[name=login]') !== null")
    except AssertionError:
        raise AssertionError(page.evaluate("location.href + ' ' + document.body.innerText")) from None
    fill(page, "input[name=login]", "alice")
    fill(page, "input[name=password]", "any")
    click(page, "button[type=submit]")
    page.wait_for("document.querySelector('input[name=prompt][value=consent]') !== null")
    click(page, "button[type=submit]")
    page.wait_for(f"location.href.startsWith({json.dumps(back_to)})", timeout=20)


async def test_the_python_sdk_signs_in_through_mcpkit_in_a_real_browser_and_calls_a_tool(
    upstream: str, chrome: Browser, tmp_path: Path
) -> None:
    loopback, storage, shot = Loopback(), Storage(), tmp_path / "consent-page.png"

    async def redirect(url: str) -> None:
        await anyio.to_thread.run_sync(
            sign_in_in_chromium, chrome, url, loopback.url, shot, "SDK Test Client"
        )

    async def callback() -> AuthorizationCodeResult:
        answer = loopback.answers[-1]
        assert "code" in answer, answer
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))

    auth = OAuthClientProvider(
        server_url=RESOURCE,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[loopback.url],  # type: ignore[list-item]
            client_name="SDK Test Client",
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )
    async with (
        running_proxy(upstream),
        peers.serving(loopback, port=loopback.port),
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        streamable_http_client(RESOURCE, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        result = await session.call_tool("whoami", {})
    assert not result.is_error, result
    seen = result.structured_content
    assert seen is not None and seen["subject"] == "alice" and seen["name"] == "User alice"
    assert storage.client is not None and seen["client"] == storage.client.client_id
    assert storage.tokens is not None and storage.tokens.refresh_token
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
    assert chrome.evaluate("document.querySelector('#done') !== null")


async def test_the_typescript_sdk_signs_in_through_mcpkit_in_a_real_browser_and_calls_a_tool(
    upstream: str, chrome: Browser, tmp_path: Path
) -> None:
    runtime = node()
    if runtime is None or not (NPM_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.skip("the TypeScript SDK is not installed (scripts/setup-peers installs it into .interop/npm)")
    loopback, shot = Loopback(), tmp_path / "consent-page-ts.png"
    command = [runtime, str(TS_CLIENT), str(NPM_DIR), RESOURCE, loopback.url]
    async with (
        running_proxy(upstream),
        peers.serving(loopback, port=loopback.port),
        await anyio.open_process(command) as process,
    ):
        assert process.stdin is not None and process.stdout is not None
        lines = TextReceiveStream(process.stdout)
        seen = ""
        with anyio.fail_after(60):
            while "\n" not in seen:
                seen += await lines.receive()
            url = seen.split("\n")[0].removeprefix("AUTHORIZE ")
            args = (chrome, url, loopback.url, shot, "TypeScript SDK Client")
            await anyio.to_thread.run_sync(sign_in_in_chromium, *args)
            await process.stdin.send((loopback.answers[-1]["code"] + "\n").encode())
            while "RESULT " not in seen or not seen.endswith("\n"):
                seen += await lines.receive()
            await process.wait()
    answer = json.loads(seen.split("RESULT ")[1])
    assert answer["result"]["subject"] == "alice" and answer["result"]["client"] == answer["client"]
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
