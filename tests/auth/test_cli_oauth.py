"""`mcpkit call URL --auth oauth`: the authorization-code flow at the real provider through $BROWSER (a
script that logs in with httpx and follows the redirect to the CLI's loopback listener, as a browser
would), and the tokens kept in a 0600 file that the next run uses without the browser."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from auth_server import RESOURCE, AuthServer, authorization_server, protected

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


def _browser(tmp_path: Path, name: str, record: Path) -> str:
    """An executable $BROWSER (webbrowser runs one program with the URL) that runs cli_browser.py."""
    script = tmp_path / name
    browser = Path(__file__).with_name("cli_browser.py")
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {browser} "$1" {record}\n')
    script.chmod(0o700)
    return str(script)


async def _mcpkit(config: Path, browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CONFIG_HOME": str(config), "BROWSER": browser}
    command = [sys.executable, "-m", "mcpkit.cli", *args]
    return await anyio.to_thread.run_sync(
        lambda: subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    )


async def test_oauth_in_the_browser_then_the_kept_token(provider: AuthServer, tmp_path: Path) -> None:
    config, record = tmp_path / "config", tmp_path / "loopback-answer.txt"
    login = ["--auth", "oauth", "--client-id", "mcp-app", "--client-secret", "mcp-app-secret"]
    async with protected(provider) as url:
        refused = await _mcpkit(config, "/bin/false", "call", url, "echo", "text=hi")
        first = await _mcpkit(
            config, _browser(tmp_path, "b1", record), "call", url, "echo", "text=hi", *login
        )
        again = await _mcpkit(config, "/bin/false", "call", url, "echo", "text=again", *login)
    assert refused.returncode == 3 and "the server wants credentials" in refused.stderr
    assert first.returncode == 0, first.stderr
    assert first.stdout == "hi\n"
    assert "mcpkit: authorize in the browser; if none opens, visit:" in first.stderr
    assert record.read_text().startswith("200 ")  # the loopback listener answered the browser
    tokens = config / "mcpkit" / "oauth.json"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert stat.S_IMODE(tokens.parent.stat().st_mode) == 0o700
    assert provider.issuer in tokens.read_text()
    # the kept token goes out at once: no browser (/bin/false would fail the flow), no authorization line
    assert again.returncode == 0, again.stderr
    assert again.stdout == "again\n" and "authorize" not in again.stderr


async def test_an_authorization_that_fails_is_one_line(provider: AuthServer, tmp_path: Path) -> None:
    async with protected(provider) as url:
        done = await _mcpkit(tmp_path, "/bin/false", "call", url, "echo", "text=hi", "--auth", "oauth")
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        "mcpkit: authorization failed: no_registration:"
        f" {provider.issuer} offers no way to register this client"
    ]
