"""A stdio server for the CLI client tests: `python tests/cli/client_server.py` (or `... --http PORT`)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import orjson

from mcpkit import Context, Server

server = Server("cli-client-tests", "1.0")


@server.tool()
def header(name: Annotated[str, "The header to read back"], ctx: Context) -> str:
    """The value of one HTTP request header."""
    return (ctx.request_headers or {}).get(name.lower(), "<none>")


@server.tool()
def forecast(
    city: Annotated[str, "The city to forecast"],
    days: Annotated[int, "How many days ahead"] = 3,
    units: str = "metric",
) -> str:
    """A made-up forecast."""
    return f"{city}: sunny for {days} days ({units})"


@server.tool()
def tagged(name: str, tags: list[str] | None = None, meta: dict[str, Any] | None = None) -> str:
    """Echo optional list and object arguments as JSON."""
    return orjson.dumps({"name": name, "tags": tags, "meta": meta}).decode()


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Report progress n times out of n."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"step {step}")
    return f"counted {n}"


@server.tool()
async def chatter(ctx: Context) -> str:
    """One log message at debug, info and error."""
    for level in ("debug", "info", "error"):
        await ctx.log(level, f"a {level} line", logger="chatter")
    return "chattered"


SURVEY = {
    "type": "object",
    "properties": {
        "size": {"type": "string", "title": "Size", "enum": ["small", "medium", "large"]},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 10, "default": 2},
        "code": {"type": "string", "title": "Code", "pattern": "^[A-Z]{3}$"},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "vegan": {"type": "boolean", "title": "Vegan"},
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {"type": "string", "enum": ["bread", "wine", "cake"]},
        },
    },
    "required": ["size", "guests", "code", "vegan"],
}


@server.tool()
async def survey(ctx: Context) -> str:
    """Ask a form with every kind of field; the answer as JSON."""
    answer = await ctx.elicit("Tell us about your booking", SURVEY)
    return orjson.dumps({"action": answer.action, "content": answer.content}).decode()


@server.tool()
async def ask_model(ctx: Context) -> str:
    """Sampling: the client's model's text, or the error it answered."""
    result = await ctx.sample("Say hi.", max_tokens=20)
    content = result.get("content", {})
    return str(content.get("text", "")) if isinstance(content, dict) else str(content)


if __name__ == "__main__":
    if "--http" in sys.argv:
        from mcpkit.transports.http_server import serve_http

        serve_http(server, host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run()
