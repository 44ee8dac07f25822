"""The HTTP transports live in two packages (http_server/, http_client/); their light modules load
neither the ASGI app nor httpx, so a program using only an event store or a backoff policy stays small."""

from __future__ import annotations

import subprocess
import sys


def test_importing_a_light_module_loads_neither_the_app_nor_httpx() -> None:
    code = (
        "import sys, mcpkit.transports.http_server.event_store, mcpkit.transports.http_client.backoff;"
        "print([m for m in sys.modules if m.endswith('.app') or m.startswith(('httpx', 'uvicorn'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
