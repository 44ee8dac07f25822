"""The app of the cluster limits tests: `uvicorn --factory limits_app:build`.

A server behind API keys (alice, bob) whose `add` calls are held per principal to MCPKIT_RATE tokens a
second with a burst of MCPKIT_BURST, and whose `hold` calls to MCPKIT_MAX_IN_FLIGHT at once, counted in
the Redis at MCPKIT_REDIS_URL that also holds the sessions.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import anyio

from mcpkit import Server
from mcpkit.auth import APIKey, APIKeyVerifier, ProtectedResource, protect
from mcpkit.cluster import RedisBackplane
from mcpkit.server.middleware import ConcurrencyLimit, RateLimit
from mcpkit.transports.http_server import StreamableHTTPApp

KEYS = {"alice": "alice-key-0123456789abcdef", "bob": "bob-key-0123456789abcdef"}
RESOURCE = "http://mcp.test/mcp"


def worker_name() -> str:
    return os.environ.get("MCPKIT_WORKER_NAME", "unnamed")


def make_server(backplane: RedisBackplane) -> Server:
    server = Server("limits", peers=backplane.peers(), tasks=backplane.tasks())

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def hold() -> str:
        """Leaves a file `held-<random>` in MCPKIT_TEST_DIR, then returns once the file `release` is
        there: the test sees who holds a slot, and decides when slots free up."""
        Path(os.environ["MCPKIT_TEST_DIR"], f"held-{uuid.uuid4().hex}").touch()
        release = Path(os.environ["MCPKIT_TEST_DIR"], "release")
        while not release.exists():
            await anyio.sleep(0.05)
        return worker_name()

    store = backplane.limits()
    rate, burst = float(os.environ["MCPKIT_RATE"]), int(os.environ["MCPKIT_BURST"])
    server.middleware.add(RateLimit(per_second=rate, burst=burst, tools={"add"}, store=store))
    cap = int(os.environ["MCPKIT_MAX_IN_FLIGHT"])
    server.middleware.add(ConcurrencyLimit(cap, tools={"hold"}, store=store))
    return server


def build() -> ProtectedResource:
    """The uvicorn factory."""
    backplane = RedisBackplane(os.environ["MCPKIT_REDIS_URL"], worker=worker_name())
    app = StreamableHTTPApp(
        make_server(backplane), allowed_hosts=["*"], allowed_origins=["*"], backplane=backplane
    )
    keys = APIKeyVerifier(
        [APIKey.of(key, who, ["mcp:tools"]) for who, key in KEYS.items()], audience=RESOURCE
    )
    return protect(app, verifier=keys, resource=RESOURCE, dpop="disabled")
