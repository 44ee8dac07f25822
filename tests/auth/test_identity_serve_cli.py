"""`mcpkit serve FILE --http --login-issuer URL --login-client-id ID ...`: the login proxy stood up by the
command line, in a process of its own (uvicorn started by the CLI), in front of the real oidc-provider
(no dynamic registration): its metadata, registration, the consent page sending the browser to the
provider with the proxy's own client, a whole login in both eras, the store in Redis with --redis, and a
configuration that cannot work as one line and exit 2 before anything listens."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import identity_harness
import pytest
import redis
from identity_harness import (
    ISSUER,
    PROXY_PORT,
    RESOURCE,
    BrowserSession,
    Request,
    form_fields,
    query_of,
    redeem,
    register,
)

import peers
from cluster.parts import redis_server
from mcpkit.client import connect_http

upstream = identity_harness.upstream
browser = identity_harness.browser
pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT / "src")}
SECRET = "mcpkit-proxy-secret"  # the proxy's client at the provider (upstream_idp.mjs)
ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]
SERVER = """from mcpkit import Context, Server

server = Server("signed-in")


@server.tool()
def whoami(ctx: Context) -> str:
    upstream = getattr(ctx.auth, "upstream", None)  # an API key has none
    name = upstream.identity.get("name") if upstream else "(key)"
    return f"{ctx.auth.subject} {name} {' '.join(sorted(ctx.auth.scopes))}"
"""


def serve_command(tmp_path: Path, *options: str) -> list[str]:
    server = tmp_path / "signed_in.py"
    server.write_text(SERVER)
    return [sys.executable, "-m", "mcpkit.cli", "serve", str(server), "--http", *options]


@contextmanager
def served(tmp_path: Path, upstream: str, *extra: str, env: dict[str, str] | None = None) -> Iterator[None]:
    """The CLI serving SERVER at ISSUER behind the login, its client secret in a file unless `env` has it."""
    secret = tmp_path / "client-secret"
    secret.write_text(SECRET + "\n")
    given = ["--login-client-secret-file", str(secret)] if env is None else []
    options = ["--port", str(PROXY_PORT), "--login-issuer", upstream, "--login-client-id", "mcpkit-proxy"]
    scopes = ["--login-scopes", "openid profile", "--login-token-scopes", "mcp:tools mcp:admin"]
    command = serve_command(tmp_path, *options, *scopes, *given, *extra)
    with peers.server_process(command, PROXY_PORT, {**ENV, **(env or {})}):
        yield


async def whoami(token: str, era: dict[str, Any]) -> str:
    async with connect_http(RESOURCE, headers={"authorization": f"Bearer {token}"}, **era) as client:
        return str((await client.call_tool("whoami", {}))["content"][0]["text"])


async def signed_in(browser: BrowserSession) -> dict[str, Any]:
    request = Request((await register())["client_id"], scope="mcp:tools")
    answer = await redeem(request, await browser.sign_in(request))
    assert answer.status_code == 200, answer.text
    tokens: dict[str, Any] = answer.json()
    return tokens


async def test_serve_with_login_options_serves_the_metadata_registration_and_sends_the_browser_upstream(
    tmp_path: Path, upstream: str, browser: BrowserSession
) -> None:
    with served(tmp_path, upstream, "--login-name", "Acme Single Sign-On"):
        async with httpx.AsyncClient() as http:
            metadata = (await http.get(f"{ISSUER}/.well-known/oauth-authorization-server")).json()
            resource = (await http.get(f"{ISSUER}/.well-known/oauth-protected-resource/mcp")).json()
            refused = await http.post(RESOURCE, json={})
            health = await http.get(f"{ISSUER}/healthz")
        request = Request((await register())["client_id"])
        page = await browser.consent_page(request)
        approved = await browser.post_consent({**form_fields(page), "decision": "approve"})
    assert metadata["issuer"] == ISSUER and metadata["registration_endpoint"] == f"{ISSUER}/register"
    assert metadata["scopes_supported"] == ["mcp:tools", "mcp:admin"]
    assert resource["authorization_servers"] == [ISSUER] and resource["resource"] == RESOURCE
    assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]
    assert health.status_code == 200  # the probes stay open
    assert "Test Client" in page.text and approved.status_code == 303
    assert "Acme Single Sign-On" in page.text  # --login-name: whom the user is sent to
    location = approved.headers["location"]
    sent = query_of(location)
    assert location.startswith(f"{upstream}/auth?")
    assert sent["client_id"] == "mcpkit-proxy" and sent["redirect_uri"] == f"{ISSUER}/callback"
    assert sent["scope"] == "openid profile" and sent["code_challenge_method"] == "S256"


async def test_a_user_signs_in_through_the_cli_started_proxy_and_calls_a_tool_in_both_eras(
    tmp_path: Path, upstream: str, browser: BrowserSession
) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("ci-bot-key-0123456789-abcdef ci-bot mcp:tools\n")
    env = {"MCPKIT_LOGIN_CLIENT_SECRET": SECRET}
    with served(tmp_path, upstream, "--api-keys", str(keys), env=env):
        tokens = await signed_in(browser)
        answers = [await whoami(tokens["access_token"], era) for era in ERAS]
        keyed = await whoami("ci-bot-key-0123456789-abcdef", ERAS[0])
    assert answers == ["alice User alice mcp:tools"] * 2
    assert keyed == "ci-bot (key) mcp:tools"  # an API key is accepted beside the login's tokens


async def test_with_redis_the_workers_share_the_logins_and_keep_the_providers_tokens_sealed_there(
    tmp_path: Path, upstream: str, browser: BrowserSession
) -> None:
    with redis_server(tmp_path) as store, served(tmp_path, upstream, "--workers", "2", "--redis", store.url):
        tokens = await signed_in(browser)
        answers = [await whoami(tokens["access_token"], era) for era in ERAS for _ in range(3)]
        kept = redis.Redis.from_url(store.url)
        keys = kept.keys("mcp:identity:*")
        values = repr([kept.get(key) for key in keys])
        kept.close()
    assert answers == ["alice User alice mcp:tools"] * 6
    assert keys and tokens["access_token"] not in values and "User alice" not in values


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--login-issuer", "{upstream}"], "--login-* needs --login-client-id ID"),
        (["--login-issuer", "{upstream}", "--login-client-id", "x"], "--login-* needs the client secret"),
        (
            ["--login-client-id", "x", "--login-client-secret-file", "{secret}"],
            "needs --login-issuer URL, or",
        ),
        (
            ["--login-issuer", "{upstream}", "--login-token-endpoint", "{upstream}/token"],
            "--login-issuer or --login-*-endpoint: give one way to find the provider",
        ),
        (["--login-issuer", "http://127.0.0.1:9", "--login-client-id", "x"], "is unreachable"),
        (["--login-issuer", "ftp://idp.example", "--login-client-id", "x"], "is not an http(s) URL"),
        (["--public-url", "http://mcp.example/mcp", "--login-issuer", "{upstream}"], "needs an https URL"),
        (["--login-client-secret-file", "{tmp}/nothing-here"], "No such file or directory"),
    ],
)
def test_a_login_configuration_that_cannot_work_is_one_line_and_exit_2(
    tmp_path: Path, upstream: str, options: list[str], said: str
) -> None:
    secret = tmp_path / "secret"
    secret.write_text(SECRET)
    words = [o.format(upstream=upstream, secret=secret, tmp=tmp_path) for o in options]
    if "--login-client-id" not in words and "needs --login-client-id" not in said:
        words += ["--login-client-id", "x"]
    if "needs the client secret" not in said and "--login-client-secret-file" not in words:
        words += ["--login-client-secret-file", str(secret)]
    env = {k: v for k, v in os.environ.items() if k != "MCPKIT_LOGIN_CLIENT_SECRET"}
    done = subprocess.run(
        serve_command(tmp_path, "--port", str(peers.free_port()), *words),
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, **ENV},
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and said in lines[0], done.stderr
    assert lines[0].startswith("mcpkit: ") and SECRET not in done.stderr


def test_login_options_need_http(tmp_path: Path) -> None:
    command = serve_command(tmp_path, "--login-client-id", "x")
    command.remove("--http")
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **ENV},
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip() == "mcpkit: --login-client-id needs --http (without it the server speaks stdio)"
    )
