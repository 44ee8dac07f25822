"""A message to a spawned server goes out whole even when its writer is cancelled halfway (a full pipe), on
asyncio and on trio, and the next message after it arrives intact too."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcpkit.runtime.stream import Inbound, Outgoing
from mcpkit.transports.stdio import LineStream, spawn

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

# Reads nothing until `go` exists, so the pipe (64 KiB) fills; then says each line's length and ends.
CHILD = """
import os, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
for line in sys.stdin.buffer:
    print(len(line), line[:1].decode(), line[-2:-1].decode(), flush=True)
"""


async def test_a_write_cancelled_on_a_full_pipe_still_goes_out_whole_and_the_next_one_after_it(
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    big = b"{" + b"x" * 300_000 + b"}"
    async with spawn([sys.executable, "-c", CHILD, str(go)]) as stream:
        with anyio.move_on_after(0.2) as gave_up:
            await stream.send(Outgoing(big, None, None))
        go.touch()
        with anyio.fail_after(10):
            await stream.send(Outgoing(b"{next}", None, None))
            first, second = await first_messages(stream, 2)
    assert gave_up.cancelled_caught  # the child was not reading: the write was cut short
    assert (first, second) == (b"%d { }" % (len(big) + 1), b"7 { }")


async def first_messages(stream: LineStream, count: int) -> list[bytes | bytearray]:
    """The first `count` messages the stream delivers (it is read no further)."""
    got: list[bytes | bytearray] = []
    with anyio.CancelScope() as scope:

        async def keep(inbound: Inbound) -> None:
            assert isinstance(inbound.data, bytes | bytearray)
            got.append(inbound.data)
            if len(got) == count:
                scope.cancel()

        await stream.deliver_to(keep)
    return got
