"""Runs one documentation page's python snippets in order, in one namespace, as a reader pasting them into
`python -m asyncio` would: top-level `await` and `async with` work. Invoked by tests/test_docs.py in a
child process (`python docs_runner.py BLOCKS.json`, in a directory holding the page's named files); prints
the first failure with its page and line, and exits 1.

Preludes may use `serve_in_background(app)`: the ASGI app served by uvicorn on a free port in a thread, its
URL returned, stopped when the page ends."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import socket
import sys
import threading
import time
import traceback
from types import CodeType
from typing import Any

SNIPPET_TIMEOUT = 60.0
_servers: list[Any] = []


def serve_in_background(app: Any) -> str:
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    _servers.append(server)
    return f"http://127.0.0.1:{port}/mcp"


def compiled(code: str, where: str) -> CodeType:
    code_object: CodeType = compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return code_object


async def run_one(code: str, where: str, namespace: dict[str, Any]) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = eval(compiled(code, where), namespace)  # exec, but awaitable when the code awaits
        if asyncio.iscoroutine(result):
            async with asyncio.timeout(SNIPPET_TIMEOUT):
                await result
    return printed.getvalue()


async def run_page(snippets: list[dict[str, Any]]) -> int:
    namespace: dict[str, Any] = {"__name__": "__docs__", "serve_in_background": serve_in_background}
    status = 0
    for snippet in snippets:
        where = snippet["where"]
        try:
            if snippet["prelude"]:
                await run_one(snippet["prelude"], f"{where} (prelude)", namespace)
            printed = await run_one(snippet["code"], where, namespace)
        except BaseException:
            print(f"{where}: the snippet raised\n{snippet['code']}", file=sys.stderr)
            traceback.print_exc()
            return 1
        if snippet["output"] is not None and printed != snippet["output"]:
            print(f"{where}: printed\n{printed}the page says\n{snippet['output']}", file=sys.stderr)
            status = 1  # the next snippets still run: every difference of the page is shown at once
    return status


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        snippets = json.load(f)
    try:
        return asyncio.run(run_page(snippets))
    finally:
        for server in _servers:
            server.should_exit = True


if __name__ == "__main__":
    sys.exit(main())
