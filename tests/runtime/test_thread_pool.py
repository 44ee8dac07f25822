"""runtime/thread_pool.py: a session's sync calls go into its lane, served by the process's pool of worker
threads; a slow call does not hold up the calls behind it, a lane holds at most `cap` threads and the pool
at most `max_threads`, and a call whose caller left before it started never runs. asyncio only: on trio
sync handlers go through anyio's threads."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

import anyio
import anyio.from_thread
import pytest

from mcpkit.runtime.thread_pool import Lane, Pool

pytestmark = pytest.mark.anyio
WHO = contextvars.ContextVar("WHO", default="nobody")


class Gate:
    """Calls that block on a threading.Event until the test opens it; which of them have started."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.started: list[str] = []
        self.lock = threading.Lock()

    def call(self, name: str) -> Callable[[], str]:
        def blocked() -> str:
            with self.lock:
                self.started.append(name)
            assert self.open.wait(10), "the test never opened the gate"
            return name

        return blocked


@contextmanager
def opened_at_the_end(gate: Gate) -> Iterator[Gate]:
    try:
        yield gate
    finally:
        gate.open.set()  # no worker thread stays blocked past a failed test


def lane(cap: int | None = None, pool: Pool | None = None) -> Lane:
    loop = asyncio.get_running_loop()
    return Lane(loop, cap) if pool is None else Lane(loop, cap, pool)


async def settle(check: Callable[[], bool]) -> None:
    """Wait (5 s at most) until `check()` holds."""
    with anyio.fail_after(5):
        while not check():
            await anyio.sleep(0.005)


async def test_a_call_returns_its_value_raises_its_error_and_sees_the_callers_context() -> None:
    calls = lane()
    WHO.set("ada")
    assert await calls.submit(lambda: WHO.get()) == "ada"
    with pytest.raises(ZeroDivisionError):
        await calls.submit(lambda: 1 // 0)

    def stop() -> None:
        raise StopIteration

    with pytest.raises(RuntimeError, match="StopIteration"):  # a future cannot carry StopIteration
        await calls.submit(stop)


async def test_a_sync_call_reaches_back_into_its_loop_with_from_thread() -> None:
    async def on_the_loop() -> str:
        return "from the loop"

    assert await lane().submit(lambda: anyio.from_thread.run(on_the_loop)) == "from the loop"


async def test_a_slow_call_does_not_hold_up_the_calls_queued_behind_it() -> None:
    with opened_at_the_end(Gate()) as gate:
        calls = lane()
        slow = calls.submit(gate.call("slow"))
        await settle(lambda: gate.started == ["slow"])
        with anyio.fail_after(5):
            quick = [await calls.submit(partial(str.upper, name)) for name in "abc"]  # on another thread
        assert quick == ["A", "B", "C"]
        assert not slow.done()
        gate.open.set()
        assert await slow == "slow"


async def test_a_lane_never_holds_more_threads_than_its_cap() -> None:
    with opened_at_the_end(Gate()) as gate:
        calls = lane(cap=2)
        waiting = [calls.submit(gate.call(str(i))) for i in range(4)]
        await settle(lambda: len(gate.started) == 2)
        await anyio.sleep(0.05)  # fifty times the patience after which a stuck lane would get a thread
        assert len(gate.started) == 2 and calls.threads == 2
        gate.open.set()
        assert [await call for call in waiting] == ["0", "1", "2", "3"]


async def test_the_pool_never_runs_more_threads_than_its_maximum_across_lanes() -> None:
    with opened_at_the_end(Gate()) as gate:
        pool = Pool(max_threads=2)
        waiting = [lane(pool=pool).submit(gate.call(str(i))) for i in range(3)]
        await settle(lambda: len(gate.started) == 2)
        await anyio.sleep(0.05)
        assert len(gate.started) == 2  # the third lane waits for a thread to come free
        gate.open.set()
        assert sorted([await call for call in waiting]) == ["0", "1", "2"]


async def test_a_call_whose_caller_left_before_it_started_never_runs() -> None:
    ran: list[str] = []
    with opened_at_the_end(Gate()) as gate:
        calls = lane(cap=1)
        first = calls.submit(gate.call("first"))
        await settle(lambda: gate.started == ["first"])
        left = calls.submit(lambda: ran.append("left"))
        left.cancel()  # as a cancelled awaiter does
        after = calls.submit(lambda: ran.append("after"))
        gate.open.set()
        await first
        await after  # the lane runs in order: "left" would have run by now
    assert ran == ["after"]
