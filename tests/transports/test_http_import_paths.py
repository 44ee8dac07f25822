"""The HTTP transports live in two packages (http_server/, http_client/); every old import path works."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MOVED = {
    "mcpkit.transports.event_store": "mcpkit.transports.http_server.event_store",
    "mcpkit.transports.http_asgi": "mcpkit.transports.http_server.asgi",
    "mcpkit.transports.http_sessions": "mcpkit.transports.http_server.sessions",
    "mcpkit.transports.http_streams": "mcpkit.transports.http_server.streams",
    "mcpkit.transports.http_registry": "mcpkit.transports.http_server.registry",
    "mcpkit.transports.http_hosting": "mcpkit.transports.http_server.hosting",
    "mcpkit.transports.http_stateless": "mcpkit.transports.http_server.stateless",
    "mcpkit.transports.http_clients": "mcpkit.transports.http_server.clients",
    "mcpkit.transports.http_backoff": "mcpkit.transports.http_client.backoff",
    "mcpkit.transports.legacy_sse_client": "mcpkit.transports.http_client.legacy_sse",
    "mcpkit.transports.http_failures": "mcpkit.transports.http_client.failures",
    "mcpkit.transports.http_handshake": "mcpkit.transports.http_client.handshake",
    "mcpkit.transports.http_modern_traffic": "mcpkit.transports.http_client.modern_traffic",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_module_path_gives_the_moved_module_itself(old: str, new: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(new)


def test_the_old_server_and_client_modules_names_still_export_what_they_did() -> None:
    from mcpkit.transports.event_store import EventsExpired, InMemoryEventStore
    from mcpkit.transports.http_backoff import Backoff
    from mcpkit.transports.http_client import HTTPClientStream, open_http_stream
    from mcpkit.transports.http_server import SessionStream, StreamableHTTPApp, client_address, serve_http
    from mcpkit.transports.legacy_sse_client import open_legacy_sse_stream

    for name in (EventsExpired, InMemoryEventStore, Backoff, HTTPClientStream, open_http_stream):
        assert name is not None
    for server_name in (SessionStream, StreamableHTTPApp, client_address, serve_http, open_legacy_sse_stream):
        assert server_name is not None


def test_importing_an_old_light_module_loads_neither_the_app_nor_httpx() -> None:
    code = (
        "import sys, mcpkit.transports.event_store, mcpkit.transports.http_backoff;"
        "print([m for m in sys.modules if m.endswith('.app') or m.startswith(('httpx', 'uvicorn'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
