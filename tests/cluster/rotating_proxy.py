"""A per-request proxy for tests: each HTTP request goes to the next worker in turn, so no two requests
in a row (the answer to an elicitation, a resumption, a notification) reach the same worker. A TCP
balancer would balance per connection and let keep-alive hide a session kept in one process. Bodies
are streamed both ways chunk by chunk, so SSE events pass as they are produced.
"""

from __future__ import annotations

import itertools
from typing import Any

import httpx

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "host", "content-length"}


class RotatingProxy:
    def __init__(self, upstreams: list[str]) -> None:
        self.upstreams = upstreams
        self._next = itertools.cycle(range(len(upstreams)))
        self.hops: list[int] = []  # which upstream each request went to, in order
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
            await self.http.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        index = next(self._next)
        self.hops.append(index)
        headers = [(k, v) for k, v in scope["headers"] if k.decode().lower() not in _HOP]
        request = self.http.build_request(
            scope["method"], self.upstreams[index], headers=headers, content=body
        )
        try:
            response = await self.http.send(request, stream=True)
        except httpx.HTTPError:
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            out = [(k.encode(), v.encode()) for k, v in response.headers.items() if k.lower() not in _HOP]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except httpx.HTTPError:
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()
