#!/usr/bin/env python3
"""Tool search over a large catalog: recall of the intended tool and search latency (issue 33).

The catalog: 1,050 synthetic tools (25 services x 6 objects x 7 actions, each with a description and
parameters of its kind) plus the live tools of the reference servers, read through a ClientGroup:
`demo` (examples/everything.py), `ref` (@modelcontextprotocol/server-everything, when installed) and
`sdk` (tests/interop/sdk_server.py, when the `mcp` package is). The queries are written by hand in
tool_search_queries.json, each with the tool(s) that answer it; they paraphrase rather than quote.

    PYTHONPATH=src .venv/bin/python benchmarks/tool_search.py [--repeat 200] [--misses]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from mcpkit.client.group import ClientGroup, StdioServer, ToolIndex

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / ".interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
JSON = dict[str, Any]

SERVICES = {
    "github": ["issue", "pull_request", "repository", "branch", "release", "comment"],
    "jira": ["issue", "sprint", "project", "board", "comment", "attachment"],
    "slack": ["message", "channel", "user", "reminder", "reaction", "file"],
    "gmail": ["email", "draft", "label", "thread", "attachment", "filter"],
    "calendar": ["event", "calendar", "attendee", "reminder", "room", "availability"],
    "drive": ["file", "folder", "permission", "comment", "revision", "shortcut"],
    "postgres": ["table", "row", "index", "schema", "backup", "role"],
    "s3": ["bucket", "object", "policy", "lifecycle_rule", "tag", "presigned_url"],
    "stripe": ["customer", "invoice", "payment", "subscription", "refund", "product"],
    "weather": ["forecast", "alert", "station", "observation", "radar_image", "air_quality"],
    "notion": ["page", "database", "block", "comment", "user", "workspace"],
    "linear": ["issue", "project", "cycle", "team", "label", "comment"],
    "zendesk": ["ticket", "user", "organization", "macro", "article", "satisfaction_rating"],
    "salesforce": ["lead", "opportunity", "account", "contact", "case", "campaign"],
    "shopify": ["order", "product", "customer", "inventory_item", "discount", "collection"],
    "twilio": ["sms", "call", "phone_number", "recording", "conversation", "verification"],
    "spotify": ["playlist", "track", "album", "artist", "queue", "device"],
    "kubernetes": ["pod", "deployment", "service", "secret", "config_map", "namespace"],
    "docker": ["container", "image", "volume", "network", "compose_project", "registry_login"],
    "trello": ["card", "board", "list", "checklist", "member", "label"],
    "hubspot": ["contact", "deal", "company", "ticket", "note", "email_campaign"],
    "asana": ["task", "project", "section", "portfolio", "goal", "tag"],
    "figma": ["file", "frame", "component", "comment", "style", "version"],
    "dropbox": ["file", "folder", "shared_link", "paper_doc", "team_member", "file_request"],
    "mailchimp": ["campaign", "audience", "template", "segment", "automation", "report"],
}
ACTIONS = {
    "create": (
        "Create a new {o} in {S} and return it with its id.",
        {"name": "Name or title", "body": "Text"},
    ),
    "get": ("Get one {S} {o} by its id, with all of its fields.", {"{o}_id": "The {o}'s id"}),
    "list": ("List the {o}s in {S}, newest first, one page at a time.", {"limit": "Page size", "cursor": ""}),
    "update": (
        "Change fields of an existing {o} in {S}.",
        {"{o}_id": "The {o}'s id", "fields": "New values"},
    ),
    "delete": ("Delete a {o} from {S} permanently; it cannot be undone.", {"{o}_id": "The {o}'s id"}),
    "search": ("Find {S} {o}s matching a text query and filters.", {"query": "Words to match", "limit": ""}),
    "export": ("Export {S} {o}s to a CSV or JSON file.", {"format": "csv or json", "destination": "Path"}),
}


def synthetic_tools() -> list[JSON]:
    tools = []
    for service, objects in SERVICES.items():
        label = service.capitalize()
        for obj in objects:
            spoken = obj.replace("_", " ")
            for action, (text, params) in ACTIONS.items():
                properties = {
                    p.format(o=obj): {"type": "string", "description": d.format(o=spoken)}
                    for p, d in params.items()
                }
                tools.append(
                    {
                        "name": f"{service}.{action}_{obj}",
                        "description": text.format(o=spoken, S=label),
                        "inputSchema": {"type": "object", "properties": properties},
                    }
                )
    return tools


async def reference_tools() -> tuple[list[JSON], dict[str, str]]:
    env = {"PYTHONPATH": str(ROOT / "src")}
    servers = {"demo": StdioServer(sys.executable, (str(ROOT / "examples/everything.py"),), env)}
    if EVERYTHING.is_file() and shutil.which("node"):
        servers["ref"] = StdioServer("node", (str(EVERYTHING), "stdio"))
    servers["sdk"] = StdioServer(sys.executable, (str(ROOT / "tests/interop/sdk_server.py"),), env)
    with open(os.devnull, "w") as quiet:
        async with ClientGroup(servers, start_timeout=60, stderr=quiet) as group:
            return group.tools(), {name: s["state"] for name, s in group.status().items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200, help="searches per query for the latency figures")
    parser.add_argument("--misses", action="store_true", help="print each query whose tool is not first")
    parser.add_argument("--scale", type=int, default=10, help="copies of the synthetic set, for latency")
    args = parser.parse_args()
    live, states = anyio.run(reference_tools)
    catalog = synthetic_tools() + live
    queries = orjson.loads((Path(__file__).parent / "tool_search_queries.json").read_bytes())
    names = {t["name"] for t in catalog}
    missing = [q["query"] for q in queries if not set(q["expect"]) & names]
    queries = [q for q in queries if set(q["expect"]) & names]

    print(f"servers: {states}; catalog {len(catalog)} tools ({len(live)} live); {len(queries)} queries")
    if missing:
        print(f"skipped (their server is not here): {missing}")
    print("| search | recall@1 | recall@3 | recall@5 | recall@10 | MRR@10 | index build | p50 | p95 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for synonyms in (False, True):
        measure(catalog, queries, synonyms, args.repeat, args.misses)
    if args.scale > 1:
        copies = [
            {**tool, "name": f"{tool['name'].replace('.', f'{n}.', 1)}"}
            for n in range(2, args.scale + 1)
            for tool in synthetic_tools()
        ]
        big = catalog + copies
        print(f"\n{args.scale} copies of the synthetic set ({len(big)} tools; the recall is not comparable):")
        measure(big, queries, True, max(1, args.repeat // 10), False)


def measure(catalog: list[JSON], queries: list[JSON], synonyms: bool, repeat: int, misses: bool) -> None:
    start = time.perf_counter()
    index = ToolIndex(catalog, synonyms=synonyms)
    build_ms = (time.perf_counter() - start) * 1e3
    ranks = []
    for q in queries:
        found = [t["name"] for t in index.search(q["query"], 10)]
        rank = next((i + 1 for i, n in enumerate(found) if n in q["expect"]), None)
        ranks.append(rank)
        if misses and rank != 1:
            print(f"  rank {rank}: {q['query']!r} -> {found[:3]} (want {q['expect']})")
    timings = []
    for q in queries:
        for _ in range(repeat):
            t0 = time.perf_counter()
            index.search(q["query"], 5)
            timings.append((time.perf_counter() - t0) * 1e3)
    timings.sort()

    def recall(k: int) -> str:
        hits = sum(1 for r in ranks if r is not None and r <= k)
        return f"{hits}/{len(ranks)} ({100 * hits / len(ranks):.0f}%)"

    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    p50, p95 = statistics.median(timings), timings[int(0.95 * (len(timings) - 1))]
    label = "BM25 + verb synonyms (default)" if synonyms else "BM25 alone"
    print(
        f"| {label} | {recall(1)} | {recall(3)} | {recall(5)} | {recall(10)} "
        f"| {mrr:.2f} | {build_ms:.0f} ms | {p50:.2f} ms | {p95:.2f} ms |"
    )


if __name__ == "__main__":
    main()
