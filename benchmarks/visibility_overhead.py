"""What a visibility hook (`Server(visible=...)`) costs: one page of tools/list and one tools/call as the
Registry and handlers answer them (no transport), over N tools of 10 tenants, without a hook and with a
hook showing the caller its tenant's tenth; and, with the hook, what a cluster worker pays to work out a
caller's views of every list (`Visibility.views`: once per initialize, per standalone GET, and per held
GET stream on each list change).

    python benchmarks/visibility_overhead.py [--tools 1000] [--repetitions 5]

Prints the median time (µs) of each repetition; compare the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from mcpkit import Server
from mcpkit.protocol.resource_auth import AccessToken

AUTH = AccessToken("ann", "cli", frozenset(), None, (), {"tenant": "t3"})


def same_tenant(auth: AccessToken | None, _kind: str, item: Any) -> bool:
    return auth is not None and item.meta["tenant"] == auth.claims.get("tenant")


def server(tools: int, hooked: bool) -> Server:
    made = Server("bench", page_size=100, visible=same_tenant if hooked else None)
    for n in range(tools):
        made.add_tool(lambda: "x", name=f"tool{n}", meta={"tenant": f"t{n % 10}"})
    return made


def per_call(fn: Callable[[], object], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        fn()
    return (time.perf_counter() - start) / count * 1e6


def measure(tools: int, hooked: bool, count: int) -> tuple[float, float]:
    made = server(tools, hooked)
    visibility = made.services.visibility
    shows = visibility.shows(AUTH) if visibility is not None else None
    registry = made.registry
    listing = per_call(lambda: registry.listing("tools", "2025-11-25", None, None, shows), count)
    # what tools/call adds before the tool runs: the named item's look-up and the hook on it
    named = per_call(lambda: shows is None or shows("tools", registry.tools["tool3"]), count * 10)
    return listing, named


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    for hooked in (False, True):
        runs = [measure(args.tools, hooked, 500) for _ in range(args.repetitions)]
        listing = statistics.median(r[0] for r in runs)
        named = statistics.median(r[1] for r in runs)
        label = "hook" if hooked else "no hook"
        page = f"tools/list page ({args.tools} tools): {listing:8.1f} µs"
        print(f"{label:8} {page}   per named call: {named:5.2f} µs")
    visibility = server(args.tools, True).services.visibility
    assert visibility is not None
    runs = [per_call(lambda: visibility.views(AUTH), 50) for _ in range(args.repetitions)]
    print(f"hook     views of every list ({args.tools} tools): {statistics.median(runs):8.1f} µs")


if __name__ == "__main__":
    main()
