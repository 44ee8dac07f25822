"""`mcpkit inspect` against a server behind OAuth: the connection is refused with "wants credentials", the
page's sign-in reconnects with the authorization-code flow at the real provider (oidc-provider), the
authorization URL is shown in the page, and the tool is called with the token."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from auth_server import RESOURCE, AuthServer, authorization_server, protected

from inspector.harness import inspector

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


def browser_script(tmp_path: Path) -> str:
    """$BROWSER for webbrowser.open: logs in at the provider and follows the redirect to the loopback."""
    script, record = tmp_path / "browser", tmp_path / "loopback-answer.txt"
    login = Path(__file__).with_name("cli_browser.py")
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {login} "$1" {record}\n')
    script.chmod(0o700)
    return str(script)


def sign_in(url: str, tmp_path: Path) -> dict[str, Any]:
    env = {"BROWSER": browser_script(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    with inspector(url, env=env) as found:
        refused = found.act("connect", {})
        login = {"auth": "oauth", "clientId": "mcp-app", "clientSecret": "mcp-app-secret"}
        state = found.result("connect", login, timeout=60)
        echoed = found.result("call", {"name": "echo", "arguments": {"text": "hi"}})
        events = found.events('"kind":"oauth"')
    return {"refused": refused, "state": state, "echoed": echoed, "events": events}


async def test_the_page_signs_in_with_oauth_and_calls_with_the_token(
    provider: AuthServer, tmp_path: Path
) -> None:
    async with protected(provider) as url:
        got = await anyio.to_thread.run_sync(sign_in, url, tmp_path)
    assert got["refused"].status_code == 502 and "wants credentials" in got["refused"].json()["error"]
    assert got["state"]["connected"] is True
    assert got["echoed"]["content"][0]["text"] == "hi"
    oauth = [e for e in got["events"] if e["kind"] == "oauth"]
    assert oauth and oauth[0]["url"].startswith(provider.issuer)
