"""Fuzzing the stdio transport: one real server process takes every mutated line of the run.

Each example writes its lines to the same process's stdin, then a sentinel ping; every request with
a usable id must be answered, then a valid call must get its real answer, and at the end the
process is still alive.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson
import pytest
from fuzz_messages import (
    HANDSHAKE_SEEDS,
    MODERN_SEEDS,
    SENTINEL,
    budget,
    examples_available,
    initialize,
    request,
    stateless_request,
    wire_bytes,
)
from fuzz_oracle import answered, check_replies, expected_ids, internal_errors, parsed
from hypothesis import given as given_
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(not examples_available(), reason="needs ../shared/spec beside the checkout")

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).with_name("fuzz_server.py")
WAIT = 10.0  # seconds an answer may take before the server counts as hung


class StdioPeer:
    """A line-level client of a server process; a thread moves its stdout lines into a queue."""

    def __init__(self) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.sentinels = (f"{SENTINEL}{n}" for n in range(10**9))

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def write(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def read_until(self, goal: Counter[Any]) -> list[Any]:
        """Replies until every id in `goal` is answered as often as it says; fails on a hang."""
        replies: list[Any] = []
        deadline = time.monotonic() + WAIT
        while any(answered(replies)[rid] < count for rid, count in goal.items()):
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no answer within {WAIT} s; waiting for {goal}, got {replies}\n{self.log()}")
            replies.append(orjson.loads(line))
        return replies

    def ask(self, message: dict[str, Any]) -> list[Any]:
        self.write(orjson.dumps(message))
        return self.read_until(Counter({("str", message["id"]): 1}))

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-3000:].decode(errors="replace")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


@pytest.fixture(scope="module")
def peer() -> Iterator[StdioPeer]:
    peer = StdioPeer()
    try:
        [reply] = peer.ask(initialize(SENTINEL + "init"))
        assert reply["result"]["protocolVersion"] == "2025-11-25"
        peer.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield peer
        assert peer.process.poll() is None, f"the server died during the fuzz run\n{peer.log()}"
    finally:
        peer.close()


def still_serves(peer: StdioPeer) -> list[Any]:
    """A valid call is answered for real; replies that straggled in before it are returned."""
    rid = next(peer.sentinels)
    replies = peer.ask(request(rid, "tools/call", {"name": "echo", "arguments": {"text": "still here"}}))
    [answer] = [r for r in replies if r.get("id") == rid]
    assert answer["result"]["content"] == [{"type": "text", "text": "still here"}], answer
    return [r for r in replies if r.get("id") != rid]


@budget(1000)
@given_(st.lists(wire_bytes(HANDSHAKE_SEEDS + MODERN_SEEDS, newlines=False), min_size=1, max_size=6))
def test_one_stdio_server_answers_every_mutated_request_and_keeps_serving(
    peer: StdioPeer, batch: list[tuple[Any, bytes]]
) -> None:
    raws = [raw for _, raw in batch]
    messages = [parsed(raw) for raw in raws]
    for raw in raws:
        peer.write(raw)
    sentinel = next(peer.sentinels)
    peer.write(orjson.dumps(stateless_request(sentinel, "tools/list")))
    must, _ = expected_ids(messages)
    replies = peer.read_until(must + Counter({("str", sentinel): 1}))
    replies += still_serves(peer)
    replies = [r for r in replies if not str(r.get("id")).startswith(SENTINEL)]
    check_replies(messages, replies)
    assert internal_errors(messages, replies) == []
    assert peer.process.poll() is None, peer.log()
