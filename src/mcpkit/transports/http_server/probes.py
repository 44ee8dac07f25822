"""Operations settings and the probe endpoints an orchestrator asks: is the process up, may it take work.

`GET /healthz` is 200 while the process serves. `GET /readyz` is 200 once the app's lifespan has started,
while every readiness check passes (the backplane answers) and the app is not draining; else 503 with a
short JSON reason. Both skip the Host and Origin checks: a kubelet or load balancer asks by the pod's
address, and the answer tells a DNS-rebinding page nothing beyond "up" or "not ready". `GET /metrics`
(when the app has scrapeable metrics) skips them too, for a scraper asking by the pod's address, but
refuses any request a browser sends (it carries Origin or Sec-Fetch-*), since it names the server's tools.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio
import orjson

from ...protocol.http_rules import HTTPRefusal
from ...runtime.metrics import Metrics
from .asgi import JSON_HEADERS, ASGIMessage, Scope, Send, endpoint_path, respond

__all__ = ["Operations", "Probes", "ReadyCheck"]

# what a browser sends and a scraper does not: a page (DNS rebinding included) never reads /metrics
_BROWSER = frozenset({b"origin", b"sec-fetch-site", b"sec-fetch-mode"})

# None when ready, else why not (a few words, sent in the 503's body)
ReadyCheck = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True, slots=True)
class Operations:
    """What a StreamableHTTPApp offers an operator (`StreamableHTTPApp(operations=Operations())`).

    `health_path` / `ready_path`: the probes (None: not served). `drain_on_sigterm`: SIGTERM drains
    (readiness 503, no new sessions, GET streams end with an SSE `retry:` hint, requests in flight
    finish) for up to `drain_timeout` seconds before the ASGI server is told to stop. `heartbeat`: an SSE
    comment on an SSE response idle for so many seconds, so idle proxies keep it open (None: never).
    `check_timeout`: how long a readiness check may take before it counts as failed. `metrics`
    (mcpkit.runtime.metrics): where the app's gauges go; one that can be scraped (PrometheusMetrics) is
    served at `metrics_path`.
    """

    health_path: str | None = "/healthz"
    ready_path: str | None = "/readyz"
    drain_on_sigterm: bool = True
    drain_timeout: float = 30.0
    heartbeat: float | None = 15.0
    check_timeout: float = 2.0
    metrics: Metrics | None = None
    metrics_path: str = "/metrics"


class Probes:
    """The probe endpoints of one app; `phase` follows its lifespan, `draining` its drain."""

    def __init__(self, operations: Operations, checks: Sequence[ReadyCheck] = ()) -> None:
        self.operations = operations
        self.checks = tuple(checks)
        self.phase = "serving"  # without lifespan (a mount that does not forward it) there is no start
        self.draining = False

    def watch_lifespan(self, send: Send) -> Send:
        """`send` for the ASGI lifespan, noting when startup completes and shutdown begins."""
        self.phase = "starting"

        async def watched(message: ASGIMessage) -> None:
            if message["type"] == "lifespan.startup.complete":
                self.phase = "serving"
            await send(message)

        return watched

    async def answer(self, scope: Scope, send: Send) -> bool:
        """Answer the request if it asks a probe; False when it asks something else."""
        path = endpoint_path(scope)
        ops = self.operations
        if scope["method"] not in ("GET", "HEAD"):
            return False
        if path == ops.metrics_path and ops.metrics is not None:
            if any(key in _BROWSER for key, _ in scope["headers"]):
                raise HTTPRefusal(403, "Forbidden: metrics are for scrapers, not browser pages")
            return await self._scrape(ops.metrics, send)
        if path not in (ops.health_path, ops.ready_path):
            return False
        reason = None if path == ops.health_path else await self.unready()
        status, body = (200, {"status": "ok"}) if reason is None else (503, {"status": reason})
        await respond(send, status, orjson.dumps(body), JSON_HEADERS)
        return True

    async def _scrape(self, metrics: Metrics, send: Send) -> bool:
        text = metrics.exposition()
        if text is None:
            return False
        await respond(send, 200, text[0], [(b"content-type", text[1].encode())])
        return True

    async def unready(self) -> str | None:
        """Why the app should not get new work now, or None."""
        if self.phase != "serving":
            return self.phase
        if self.draining:
            return "draining"
        for check in self.checks:
            with anyio.move_on_after(self.operations.check_timeout):
                reason = await check()
                if reason is not None:
                    return reason
                continue
            return "readiness check timed out"
        return None
