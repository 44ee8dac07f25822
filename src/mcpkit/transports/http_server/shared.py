"""The seam behind a Streamable HTTP app: the `SessionHost` that serves the handshake-era requests that
create or name a session, and the GET and DELETE on one.

Two hosts: `LocalSessions` (sessions in this process) and, given a `Backplane`
(mcpkit.cluster.RedisBackplane), the cluster's, in which any worker serves any request of any session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ...runtime.metrics import Metrics
from .delivery import Answering
from .exchange import Exchange
from .sessions import SessionStream

__all__ = ["Backplane", "SessionHost"]


class SessionHost(Protocol):
    async def new(self, exchange: Exchange) -> None:
        """Serve an initialize POST: a new session, visible to every worker before its id is sent."""
        ...

    async def post(self, exchange: Exchange) -> None:
        """Serve a POST naming a session (request, notification or response)."""
        ...

    async def get(self, exchange: Exchange) -> None:
        """A GET on a session: its standalone stream, or the resumption Last-Event-ID names."""
        ...

    async def delete(self, exchange: Exchange) -> None: ...

    async def run(self) -> None:
        """What must run while the app serves (heartbeats, messages from other workers)."""
        ...

    async def end_all(self) -> None:
        """Past a drain's deadline: every request still served here is answered with an error its client
        sees, and its handler stops."""
        ...

    async def aclose(self) -> None: ...


class Backplane(Protocol):
    def sessions(
        self,
        serve: Callable[[SessionStream], Awaitable[None]],
        target: Any,
        answering: Answering,
        *,
        strict_version: bool,
    ) -> SessionHost: ...

    async def ready(self) -> str | None:
        """None when the shared store answers, else why not (for the app's readiness probe)."""
        ...

    def measure(self, metrics: Metrics) -> None:
        """Report what the backplane counts (its round trips and errors) to `metrics`."""
        ...

    async def started(self) -> None:
        """Raise when the shared store refuses this worker at start (a configuration error), so the
        app's lifespan fails instead of serving 503s."""
        ...
