"""Backpressure over real stdio pipes: a peer that stops reading or writing costs bounded memory and time."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mcpkit.protocol.errors import RequestCancelled
from mcpkit.transports.pipes import ThreadWriter, gated
from messages import initialize

ROOT = Path(__file__).resolve().parents[2]
FLOOD = str(ROOT / "tests" / "transports" / "flood_server.py")
MiB = 1 << 20


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _call(rid: int, name: str, meta: dict[str, Any] | None = None, **arguments: Any) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}) + b"\n"


@pytest.fixture
def flood_server() -> Any:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [sys.executable, FLOOD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    init = initialize(rid=0)
    process.stdin.write(orjson.dumps(init) + b"\n")
    process.stdin.flush()
    assert orjson.loads(process.stdout.readline())["id"] == 0
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    process.stdin.flush()
    yield process
    process.kill()
    process.wait()


def test_a_server_whose_client_stops_reading_holds_bounded_output_and_then_answers(
    flood_server: subprocess.Popen[bytes],
) -> None:
    stdin, stdout = flood_server.stdin, flood_server.stdout
    assert stdin is not None and stdout is not None
    before = _rss(flood_server.pid)
    # 300 MiB of progress notifications against a client that reads none of it for a while
    stdin.write(_call(1, "flood", {"progressToken": "p"}, count=30_000, size=10_000))
    stdin.flush()
    peak = before
    for _ in range(30):
        time.sleep(0.1)
        peak = max(peak, _rss(flood_server.pid))
    assert peak - before < 64 * MiB
    seen = 0
    for line in stdout:
        message = orjson.loads(line)
        if message.get("id") == 1:
            assert message["result"]["content"][0]["text"] == "flooded"
            break
        seen += 1
    assert seen == 30_000
    stdin.write(_call(2, "echo", text="still here"))
    stdin.flush()
    assert orjson.loads(stdout.readline())["result"]["content"][0]["text"] == "still here"


def test_a_server_whose_client_sends_requests_but_reads_no_answers_stops_reading_at_a_bound(
    flood_server: subprocess.Popen[bytes],
) -> None:
    stdin = flood_server.stdin
    assert stdin is not None
    before = _rss(flood_server.pid)
    text = "y" * 100_000

    def pump() -> None:
        try:
            for rid in range(1, 20_001):  # 2 GB of answers if all were held
                stdin.write(_call(rid, "echo", text=text))
        except (BrokenPipeError, ValueError, OSError):
            pass

    threading.Thread(target=pump, daemon=True).start()
    peak = before
    for _ in range(30):
        time.sleep(0.1)
        peak = max(peak, _rss(flood_server.pid))
    assert peak - before < 64 * MiB


@pytest.mark.anyio
async def test_the_thread_writer_holds_off_reading_while_more_than_its_high_water_is_queued() -> None:
    read_end, write_end = os.pipe()
    writer = ThreadWriter(write_end, high_water=256 * 1024)
    reads: list[str] = []

    async def read_chunk() -> bytes:
        reads.append("read")
        return b"x"

    read_gated = gated(read_chunk, writer.drained)
    try:
        async with anyio.create_task_group() as tg:
            for _ in range(8):  # 8 x 128 KiB against a 64 KiB pipe nobody reads yet
                tg.start_soon(writer.write, b"z" * 128 * 1024)
            await anyio.sleep(0.2)
            with anyio.move_on_after(0.5):
                await read_gated()
            assert reads == []
            received = 0
            while received < 8 * 128 * 1024:
                received += len(await anyio.to_thread.run_sync(os.read, read_end, 1 << 20))
        assert await read_gated() == b"x"
    finally:
        os.close(read_end)
        os.close(write_end)


DEAF = [sys.executable, str(ROOT / "tests" / "transports" / "deaf_server.py")]
BIG = {"text": "x" * 4 * MiB}  # far more than a pipe holds


def _finishes(scenario: Callable[[], Awaitable[BaseException | None]], within: float = 20) -> BaseException:
    """Run `scenario` on its own event loop; fail (instead of hanging the suite) if it is still going."""
    outcome: list[BaseException | None] = []
    thread = threading.Thread(target=lambda: outcome.append(anyio.run(scenario)), daemon=True)
    thread.start()
    thread.join(within)
    assert outcome, f"still blocked after {within} s"
    assert outcome[0] is not None, "the call returned instead of raising"
    return outcome[0]


async def _call_deaf(guarded: Callable[[Awaitable[Any]], Awaitable[None]]) -> BaseException | None:
    from mcpkit.client import connect_stdio

    async with connect_stdio(DEAF, era="handshake", protocol_version="2025-11-25", shutdown_timeout=1) as c:
        try:
            await guarded(c.call_tool("echo", BIG))
        except Exception as exc:
            return exc
    return None


def test_a_request_timeout_fires_while_the_write_to_a_server_that_reads_nothing_is_blocked() -> None:
    async def scenario() -> BaseException | None:
        from mcpkit.client import connect_stdio

        async with connect_stdio(
            DEAF, era="handshake", protocol_version="2025-11-25", shutdown_timeout=1
        ) as c:
            try:
                await c.call_tool("echo", BIG, timeout=1)
            except RequestCancelled as exc:
                return exc
        return None

    assert "timed out" in str(_finishes(scenario))


def test_anyio_fail_after_cancels_a_write_to_a_server_that_reads_nothing() -> None:
    async def guarded(call: Awaitable[Any]) -> None:
        with anyio.fail_after(1):
            await call

    assert isinstance(_finishes(lambda: _call_deaf(guarded)), TimeoutError)


def test_asyncio_timeout_cancels_a_write_to_a_server_that_reads_nothing() -> None:
    async def guarded(call: Awaitable[Any]) -> None:
        async with asyncio.timeout(1):
            await call

    assert isinstance(_finishes(lambda: _call_deaf(guarded)), TimeoutError)
