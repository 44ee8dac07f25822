"""`mcpkit serve FILE --http --api-keys PATH`: the endpoint answers only the keys of the file, in both eras,
in one process and with several workers; the probes stay open; a bad key file is one line before anything
starts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

import peers
from cluster.parts import redis_server
from mcpkit.auth import hash_api_key
from mcpkit.client import connect_http
from messages import HEADERS, INITIALIZE

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT / "src")}
KEY = "ci-bot-key-0123456789-abcdef"
SERVER = """from mcpkit import Context, Server

server = Server("keyed")


@server.tool()
def whoami(ctx: Context) -> str:
    return f"{ctx.auth.subject} {' '.join(sorted(ctx.auth.scopes))}"
"""
ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]


def files(tmp_path: Path) -> tuple[str, str]:
    server, keys = tmp_path / "keyed.py", tmp_path / "keys.txt"
    server.write_text(SERVER)
    keys.write_text(f"# the CI bot\n{hash_api_key(KEY)} ci-bot mcp:tools\n")
    return str(server), str(keys)


@contextmanager
def serving(tmp_path: Path, *extra: str) -> Iterator[str]:
    server, keys = files(tmp_path)
    port = peers.free_port()
    command = [sys.executable, "-m", "mcpkit.cli", "serve", server, "--http", "--port", str(port)]
    with peers.server_process([*command, "--api-keys", keys, *extra], port, ENV):
        yield f"http://127.0.0.1:{port}/mcp"


async def whoami(url: str, era: dict[str, str]) -> str:
    async with connect_http(url, headers={"Authorization": f"Bearer {KEY}"}, **era) as client:  # type: ignore[arg-type]
        return str((await client.call_tool("whoami", {}))["content"][0]["text"])


async def test_serve_with_api_keys_answers_a_known_key_in_both_eras_and_refuses_the_rest(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as url:
        answers = [await whoami(url, era) for era in ERAS]
        async with httpx.AsyncClient(timeout=30) as http:
            missing = await http.post(url, json=INITIALIZE, headers=HEADERS)
            wrong = await http.post(
                url, json=INITIALIZE, headers={**HEADERS, "authorization": f"Bearer {KEY}x"}
            )
            health = await http.get(url.replace("/mcp", "/healthz"))
    assert answers == ["ci-bot mcp:tools"] * 2
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, f'Bearer realm="{url}"')
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert health.status_code == 200  # an orchestrator's probe needs no key


async def test_every_worker_of_serve_takes_the_key_file(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis, serving(tmp_path, "--workers", "2", "--redis", redis.url) as url:
        answers = [await whoami(url, era) for era in ERAS for _ in range(3)]
        refused = httpx.post(url, json=INITIALIZE, headers=HEADERS, timeout=30)
    assert answers == ["ci-bot mcp:tools"] * 6
    assert refused.status_code == 401


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (f"{KEY}\n", "mcpkit: --api-keys: {path}, line 1: expected 'key subject scope...'"),
        (
            "# nothing yet\n",
            "mcpkit: --api-keys {path}: no keys in the file (lines of 'key subject scope...')",
        ),
    ],
)
def test_a_bad_key_file_is_one_line_and_never_shows_a_key(tmp_path: Path, content: str, said: str) -> None:
    server, keys = files(tmp_path)
    Path(keys).write_text(content)
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", "serve", server, "--http", "--api-keys", keys],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **ENV},
    )
    assert (done.returncode, done.stderr.strip()) == (2, said.format(path=keys))
    assert KEY not in done.stderr
