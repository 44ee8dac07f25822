"""Second baseline: the floor for any asyncio stdio server. An event loop, stdin through a StreamReader.

The same answers as baseline_server.py (its `handle`), but read with `StreamReader.readline` on the loop's
read-pipe transport and written through its write-pipe transport, as an asyncio server must; its cold
start includes `import asyncio`, which the blocking baseline does not pay.
"""

from __future__ import annotations

import asyncio
import sys

import orjson
from baseline_server import handle  # the script's directory is sys.path[0]

LINE_LIMIT = 1 << 24  # the 1 MiB echo is one line


async def serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    while line := await reader.readline():
        if not line.strip():
            continue
        reply = handle(orjson.loads(line))
        if reply is not None:
            writer.write(orjson.dumps(reply) + b"\n")
            await writer.drain()


if __name__ == "__main__":
    asyncio.run(serve())
