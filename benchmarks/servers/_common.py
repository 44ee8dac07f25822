"""Shared bits for the benchmark servers: repo root on sys.path, the extra-tool count."""

from __future__ import annotations

import os
import sys

# os.path, not pathlib: the baseline server imports neither, and pathlib costs ~8 ms and ~2 MiB at start
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
SRC = os.path.join(REPO_ROOT, "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

MANY_TOOLS = int(os.environ.get("BENCH_MANY_TOOLS", "0") or 0)


def make_extra_tool(i: int):  # type: ignore[no-untyped-def]
    """Tool t<i>(x: int, label: str = "") -> str, the same shape in every server."""

    async def extra(x: int, label: str = "") -> str:
        """An extra tool for the tools/list benchmark."""
        return f"{label}{x + i}"

    extra.__name__ = f"t{i}"
    extra.__qualname__ = f"t{i}"
    return extra
