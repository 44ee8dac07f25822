#!/usr/bin/env python3
"""Where a 3-tool mcpkit stdio server's start-up time goes: each import step timed in order (ms).

PYTHONPATH=src python benchmarks/startup_phases.py
"""

from __future__ import annotations

import importlib
import sys
import time

STEPS = [
    ("asyncio", ["asyncio"]),
    ("anyio", ["anyio"]),
    ("protocol", ["mcpkit.protocol.connection", "mcpkit.protocol.events"]),
    ("runtime.session", ["mcpkit.runtime.session"]),
    ("server", ["mcpkit.server.server"]),
    ("transports.stdio", ["mcpkit.transports.stdio"]),
    ("anyio backend", ["anyio._backends._asyncio"]),
]


def main() -> None:
    parts = []
    for label, modules in STEPS:
        t0 = time.perf_counter()
        for name in modules:
            importlib.import_module(name)
        parts.append(f"{label} {1e3 * (time.perf_counter() - t0):.1f}")
    from mcpkit import Server

    t0 = time.perf_counter()
    server = Server("phases", "1")
    for fn in (_add, _echo, _hello):
        server.add_tool(fn)
    parts.append(f"three tools {1e3 * (time.perf_counter() - t0):.1f}")
    print(", ".join(parts), "| pydantic imported:", "pydantic" in sys.modules)


async def _add(a: int, b: int) -> int:
    return a + b


async def _echo(text: str) -> str:
    return text


async def _hello(name: str = "world") -> str:
    return f"hello {name}"


if __name__ == "__main__":
    main()
