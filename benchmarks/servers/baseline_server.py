"""Baseline: the least a stdio MCP server can do. Blocking loop, orjson, hand-built dicts.

Answers initialize, tools/list and tools/call for echo, add and BENCH_MANY_TOOLS extra tools
t0..tN-1; notifications are ignored. No validation beyond what the benchmark needs.
"""

from __future__ import annotations

import os
import sys

import orjson

MANY_TOOLS = int(os.environ.get("BENCH_MANY_TOOLS", "0") or 0)


def _schema(props: dict, required: list) -> dict:
    return {"type": "object", "properties": props, "required": required}


TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": _schema({"text": {"type": "string"}}, ["text"]),
        "outputSchema": _schema({"result": {"type": "string"}}, ["result"]),
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": _schema({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
        "outputSchema": _schema({"result": {"type": "integer"}}, ["result"]),
    },
]
for i in range(MANY_TOOLS):
    TOOLS.append(
        {
            "name": f"t{i}",
            "description": "An extra tool for the tools/list benchmark.",
            "inputSchema": _schema(
                {"x": {"type": "integer"}, "label": {"type": "string", "default": ""}}, ["x"]
            ),
            "outputSchema": _schema({"result": {"type": "string"}}, ["result"]),
        }
    )


def _text_result(value: object) -> dict:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"result": value},
        "isError": False,
    }


def handle(msg: dict) -> dict | None:
    if "id" not in msg:
        return None
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "bench-baseline", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "add":
            result = _text_result(args["a"] + args["b"])
        elif name == "echo":
            result = _text_result(args["text"])
        elif name and name[0] == "t" and name[1:].isdigit():
            result = _text_result(f"{args.get('label', '')}{args['x'] + int(name[1:])}")
        else:
            return {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32602, "message": f"Unknown tool {name}"},
            }
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def main() -> None:
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        reply = handle(orjson.loads(line))
        if reply is not None:
            stdout.write(orjson.dumps(reply) + b"\n")
            stdout.flush()


if __name__ == "__main__":
    main()
