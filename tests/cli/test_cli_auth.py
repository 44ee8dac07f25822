"""What `--auth oauth` keeps (issue 31, item 8): a --client-id given now wins over the client kept from
before, `mcpkit auth list` shows the logins without secrets, `mcpkit auth logout URL` forgets one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcpkit.cli.oauth import FileTokenStore, oauth_client
from mcpkit.client.oauth import ClientCredentials, OAuthClient
from mcpkit.client.oauth.store import InMemoryTokenStore

ROOT = Path(__file__).resolve().parents[2]
A, B, ISSUER = "https://a.example/mcp", "https://b.example/mcp", "https://login.example"
KEPT = {
    "servers": {A: ISSUER, B: ISSUER, "https://c.example/mcp": "https://other.example"},
    "issuers": {
        ISSUER: {
            "client": {"client_id": "old-app", "client_secret": "s3cret"},
            "tokens": {"access_token": "AT-9f2", "refresh_token": "RT-77e", "expires_at": time.time() + 3600},
        },
        "https://other.example": {"client": {"client_id": "reg-1"}},
    },
}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    path = tmp_path / "mcpkit" / "oauth.json"
    path.parent.mkdir(mode=0o700)
    path.write_text(json.dumps(KEPT))
    path.chmod(0o600)
    return path


def auth(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CONFIG_HOME": str(config.parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "auth", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_auth_list_shows_each_login_without_secrets(config: Path) -> None:
    done = auth(config, "list")
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        f"{A}  issuer {ISSUER}  client old-app  token valid 59 min more, refreshable",
        f"{B}  issuer {ISSUER}  client old-app  token valid 59 min more, refreshable",
        "https://c.example/mcp  issuer https://other.example  client reg-1  no token",
    ]
    assert not any(secret in done.stdout for secret in ("s3cret", "AT-9f2", "RT-77e"))


def test_auth_logout_forgets_the_servers_issuer(config: Path) -> None:
    done = auth(config, "logout", A)
    assert (done.returncode, done.stdout) == (
        0,
        f"mcpkit: logged out of {A}; it was also the login for {B}\n",
    )
    kept = json.loads(config.read_text())
    assert kept["servers"] == {"https://c.example/mcp": "https://other.example"}
    assert list(kept["issuers"]) == ["https://other.example"]
    again = auth(config, "logout", A)
    assert (again.returncode, again.stderr) == (
        2,
        f"mcpkit: no login kept for {A} (`mcpkit auth list` shows them)\n",
    )


def test_a_client_id_given_now_replaces_the_one_kept(config: Path) -> None:
    kept = oauth_client(A, "old-app", "s3cret")  # the same client: the kept login stays
    assert kept.issuer == ISSUER
    fresh = oauth_client(A, "new-app", None)
    assert fresh.issuer is None and fresh.client == ClientCredentials("new-app", None)
    assert FileTokenStore(config, A).issuer() is None


@pytest.mark.anyio
async def test_the_library_prefers_the_given_client_over_the_stored_one() -> None:
    store = InMemoryTokenStore()
    await store.set_client(ISSUER, ClientCredentials("old-app"))
    given = ClientCredentials("new-app")
    auth = OAuthClient(A, client=given, store=store)
    metadata: Any = SimpleNamespace(issuer=ISSUER, cimd_supported=False)
    assert await auth._client_for(None, metadata, None) == given  # type: ignore[arg-type]
    assert await store.get_client(ISSUER) == given
