"""HTTP benchmark servers under one uvicorn configuration: `http_app.py KIND PORT`.

KIND is `baseline` (a bare ASGI app, below), `mcpkit-json`, `mcpkit-sse`, `sdk-json`, `sdk-sse`,
`fastmcp-json` or `fastmcp-sse` (the last two with the interpreter of benchmarks/.venv-fastmcp). Every kind
runs under the same uvicorn settings (h11, asyncio loop, no access log), so only the app differs.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

import uvicorn

try:
    import orjson
except ImportError:  # the fastmcp venv has none; only the baseline app uses it
    orjson = None

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: F401  (puts the repo's src on sys.path)

_JSON_HEADERS = [(b"content-type", b"application/json")]


class BaselineApp:
    """The least a Streamable HTTP server can do: orjson the body, answer initialize and tools/call."""

    def __init__(self) -> None:
        self.sessions: set[str] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        msg = orjson.loads(body)
        headers = list(_JSON_HEADERS)
        if "id" not in msg:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        method = msg["method"]
        if method == "initialize":
            sid = secrets.token_urlsafe(32)
            self.sessions.add(sid)
            headers.append((b"mcp-session-id", sid.encode()))
            result: dict[str, Any] = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "bench-baseline", "version": "1.0"},
            }
        else:
            args = msg["params"]["arguments"]
            value = args["a"] + args["b"]
            result = {
                "content": [{"type": "text", "text": str(value)}],
                "structuredContent": {"result": value},
                "isError": False,
            }
        out = orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": out})


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def make_app(kind: str) -> tuple[Any, str]:
    """The ASGI app for `kind` and the lifespan setting it needs."""
    if kind == "baseline":
        return BaselineApp(), "off"
    impl, mode = kind.split("-")
    if impl == "mcpkit":
        from mcpkit import Server
        from mcpkit.transports.http_server import StreamableHTTPApp

        server = Server("bench-mcpkit", "1.0")
        server.add_tool(add)
        server.add_tool(echo)
        return StreamableHTTPApp(server, json_response=mode == "json"), "on"
    if impl == "fastmcp":
        from fastmcp import FastMCP

        fast = FastMCP("bench-fastmcp")
        fast.tool(add)
        fast.tool(echo)
        return fast.http_app(json_response=mode == "json"), "on"
    from mcp.server.mcpserver import MCPServer

    sdk = MCPServer("bench-sdk", log_level="WARNING")
    sdk.add_tool(add)
    sdk.add_tool(echo)
    return sdk.streamable_http_app(json_response=mode == "json"), "on"


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    app, lifespan = make_app(kind)
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        http="h11",
        loop="asyncio",
        lifespan=lifespan,
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
