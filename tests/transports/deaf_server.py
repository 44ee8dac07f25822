"""A stdio "server" that completes the handshake and then never reads its stdin again."""

import sys
import time

import orjson

for line in sys.stdin.buffer:
    message = orjson.loads(line)
    if message.get("method") == "notifications/initialized":
        break
    if message.get("method") == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deaf", "version": "1"},
        }
        sys.stdout.buffer.write(
            orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + b"\n"
        )
        sys.stdout.buffer.flush()
time.sleep(600)
