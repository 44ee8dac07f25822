"""A raw JSON-RPC caller over Streamable HTTP for the tests that check, request by request, what a
protected server answers one token (tests/auth, tests/tenancy): every message written by hand, in
either era (a 2025-11-25 session opened with initialize, or 2026-07-28 requests carrying their `_meta`
and Mcp-Method / Mcp-Name headers), so nothing a client library does stands between the test and the
wire."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx

from messages import initialize_params

__all__ = ["BASE", "META", "RawCaller", "answer_of"]

JSON = dict[str, Any]
META = "io.modelcontextprotocol/"
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class RawCaller:
    """Requests to the MCP endpoint at `resource` with `token` (None: none), in one era."""

    def __init__(self, http: httpx.AsyncClient, token: str | None, modern: bool, resource: str) -> None:
        self.http, self.modern, self.resource, self.rid = http, modern, resource, 0
        self.headers = dict(BASE) | ({"authorization": f"Bearer {token}"} if token else {})

    async def open(self) -> None:
        """2025-11-25: initialize and initialized (the session's id kept); 2026-07-28: nothing to open."""
        if self.modern:
            self.headers["mcp-protocol-version"] = "2026-07-28"
            return
        opened = await self.send("initialize", initialize_params("2025-11-25"))
        assert opened.status_code == 200, opened.text
        self.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = "2025-11-25"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.http.post(self.resource, json=note, headers=self.headers)).status_code == 202

    def request(self, method: str, params: JSON) -> tuple[dict[str, str], str]:
        """The headers and body of the next request."""
        self.rid += 1
        headers = dict(self.headers)
        if self.modern:
            meta = {META + "protocolVersion": "2026-07-28", META + "clientCapabilities": {}}
            params = {**params, "_meta": meta}
            headers["mcp-method"] = method
            name = params.get("name") or params.get("uri")
            if isinstance(name, str):
                headers["mcp-name"] = name
        message = {"jsonrpc": "2.0", "id": self.rid, "method": method, "params": params}
        return headers, json.dumps(message)

    async def send(self, method: str, params: JSON) -> httpx.Response:
        headers, body = self.request(method, params)
        return await self.http.post(self.resource, content=body, headers=headers)

    def stream(self, method: str, params: JSON) -> AbstractAsyncContextManager[httpx.Response]:
        """The response read as it comes (a subscriptions/listen stream, say)."""
        headers, body = self.request(method, params)
        return self.http.stream("POST", self.resource, content=body, headers=headers)

    async def answer(self, method: str, params: JSON) -> JSON:
        """The HTTP status and the JSON-RPC answer (result or error) to one request; a refusal
        without one gives its status and body."""
        response = await self.send(method, params)
        if response.status_code != 200 and not _is_json(response):
            return {"status": response.status_code, "body": response.text}
        return {"status": response.status_code, **answer_of(response)}

    async def result(self, method: str, params: JSON) -> JSON:
        """The result of one request, which must succeed."""
        response = await self.send(method, params)
        assert response.status_code == 200, response.text
        answer = answer_of(response)
        assert "result" in answer, answer
        return dict(answer["result"])


def _is_json(response: httpx.Response) -> bool:
    return bool(response.headers.get("content-type", "").startswith("application/json"))


def answer_of(response: httpx.Response) -> JSON:
    """The JSON-RPC message of a JSON response, or the last one of an SSE response."""
    if _is_json(response):
        return dict(response.json())
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return dict(json.loads([d for d in data if d][-1]))
