"""A server for the group tests: `python group_server.py NAME` over stdio, `... NAME --http --port N` over
Streamable HTTP. It says who it is (name and process id), can crash, and can grow a tool at runtime."""

from __future__ import annotations

import os
import sys

from mcpkit import Context, Server
from mcpkit.server import CacheHint

NAME = sys.argv[1] if len(sys.argv) > 1 else "group"
server = Server(f"group-{NAME}", "1.0.0")


@server.tool(read_only=True)
def whoami() -> str:
    """Say which server and process answered."""
    return f"{NAME} {os.getpid()}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def crash() -> str:
    """Exit the server process at once, mid-call."""
    os._exit(3)


@server.tool()
def delete_everything() -> str:
    """A dangerous tool the tests' filters hide."""
    return "deleted"


@server.tool()
def grow(name: str) -> str:
    """Register a new tool called `name` (the server then says its tool list changed)."""
    server.add_tool(lambda: f"{name} from {NAME}", name=name, description=f"A tool grown at runtime: {name}")
    return f"grew {name}"


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Tell the sessions subscribed to `uri` that it changed."""
    await ctx.server.notify_resource_updated(uri)
    return "touched"


@server.resource(f"group://{NAME}/about")
def about() -> str:
    return f"about {NAME}"


@server.resource("group://" + NAME + "/notes/{note}")
def note(note: str) -> str:
    return f"note {note} of {NAME}"


@server.resource(f"group://{NAME}/pid/public", cache=CacheHint(60_000, "public"))
def pid_public() -> str:
    """The process id, which any client of this command may reuse for a minute (2026-07-28)."""
    return str(os.getpid())


@server.resource(f"group://{NAME}/pid/private", cache=CacheHint(60_000, "private"))
def pid_private() -> str:
    """The process id, reusable for a minute by the client that read it only."""
    return str(os.getpid())


@server.prompt()
def hello(who: str) -> str:
    """Greet someone."""
    return f"Hello {who} from {NAME}"


if __name__ == "__main__":
    if "--http" in sys.argv:
        from mcpkit.transports import serve_http

        serve_http(server, host="127.0.0.1", port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        server.run()
