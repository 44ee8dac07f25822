"""Behind a reverse proxy: X-Forwarded-For, -Proto and -Host honoured only when the peer is a trusted proxy.

    app = TrustedProxies(StreamableHTTPApp(server, allowed_hosts=["mcp.example.com"]), ["10.0.0.0/8"])

From a trusted peer, the request's client becomes the nearest address in X-Forwarded-For that is not
itself a trusted proxy, its scheme X-Forwarded-Proto's, and its Host X-Forwarded-Host's, so the Host
check and `client_address` see what the proxy saw. From anyone else the headers are ignored: a client
could write them. Serve with the ASGI server's own proxy handling off (uvicorn `proxy_headers=False`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from .asgi import Receive, Scope, Send

__all__ = ["TrustedProxies"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class TrustedProxies:
    """ASGI middleware around `app`; `trusted`: addresses or networks ("10.0.0.0/8"), or "*" for any peer."""

    def __init__(self, app: Any, trusted: Iterable[str]) -> None:
        self.app = app
        names = [t.strip() for t in trusted if t.strip()]
        self._any = "*" in names
        self._networks = [ipaddress.ip_network(n, strict=False) for n in names if n != "*"]

    def trusts(self, address: str) -> bool:
        if self._any:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] == "http" and client and self.trusts(client[0]):
            scope = self._rewritten(scope)
        await self.app(scope, receive, send)

    def _rewritten(self, scope: Scope) -> Scope:
        headers = {k.lower(): v.decode("latin-1") for k, v in scope["headers"]}
        scope = dict(scope)
        hops = [h.strip() for h in headers.get(b"x-forwarded-for", "").split(",") if h.strip()]
        while hops and self.trusts(hops[-1]):
            hops.pop()  # a chain of our own proxies: the client is the first hop none of them is
        if hops:
            scope["client"] = (hops[-1], 0)
        proto = headers.get(b"x-forwarded-proto", "").split(",")[0].strip().lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto
        host = headers.get(b"x-forwarded-host", "").split(",")[0].strip()
        if host:
            kept = [(k, v) for k, v in scope["headers"] if k.lower() != b"host"]
            scope["headers"] = [(b"host", host.encode("latin-1")), *kept]
        return scope
