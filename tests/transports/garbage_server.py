"""A hand-written stdio "server" that answers correctly but also writes garbage lines."""

import sys

import orjson

for line in sys.stdin.buffer:
    message = orjson.loads(line)
    if "id" not in message or "method" not in message:
        continue
    result: dict[str, object] = {}
    if message["method"] == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "g", "version": "1"},
        }
    elif message["method"] == "tools/list":
        sys.stdout.buffer.write(b"this is not json\n[1,2]\n\xff\xfe\n" + b"[" * 50_000 + b"\n")
        result = {"tools": []}
    sys.stdout.buffer.write(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + b"\n")
    sys.stdout.buffer.flush()
