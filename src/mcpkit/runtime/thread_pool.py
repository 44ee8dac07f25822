"""Worker threads for sync handlers on asyncio, with a cheap hand-off.

`anyio.to_thread.run_sync` costs, per call, a limiter, a cancel scope, a thread of its own and a loop
wake-up for its result, and the thread it wakes fights the loop for the GIL. Here a session's calls go
into its lane (a deque); one thread of the process-wide pool drains the lane, call after call, and the
loop is woken once for all the results that finished meanwhile.

A slow call must not hold up the calls queued behind it: the loop watches each lane while it has calls
waiting, and when none of them has finished for PATIENCE seconds it sends one more thread to the lane
(at most `cap` per lane, MAX_THREADS in all), so a waiting call gets a thread of its own within
milliseconds while short calls keep sharing one.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from contextvars import Context, copy_context
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

import anyio.lowlevel

anyio_thread: threading.local | None
try:  # so that anyio.from_thread.run() in a sync call finds its loop, as in anyio's own worker threads
    from anyio._core._eventloop import threadlocals as anyio_thread
except ImportError:  # pragma: no cover - another anyio layout: from_thread then needs token=
    anyio_thread = None

__all__ = ["MAX_THREADS", "PATIENCE", "Lane", "Pool"]

T = TypeVar("T")

MAX_THREADS = 40  # in the whole process, as anyio's default limiter
PATIENCE = 0.001  # seconds a lane's queue may stand still before it gets one more thread
HOLD = 0.0005  # seconds a thread may hold finished results while it runs more of the lane's calls
IDLE_EXIT = 10.0  # seconds a thread waits for work before it ends


class Job:
    __slots__ = ("context", "error", "fn", "future", "value")

    def __init__(self, fn: Callable[[], Any], future: asyncio.Future[Any]) -> None:
        self.fn, self.future = fn, future
        self.context: Context = copy_context()  # as anyio does: the call sees the request's context vars
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.context.run(self.fn)
        except StopIteration:  # a future cannot carry it
            self.error = RuntimeError("the sync call raised StopIteration")
        except BaseException as exc:  # handed to the caller, whatever it is
            self.error = exc


class Pool:
    """The process's worker threads: started on demand, ended after IDLE_EXIT seconds without work."""

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self.max_threads = max_threads
        self._queue: SimpleQueue[Lane] = SimpleQueue()  # lanes that want one more thread
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def put(self, lane: Lane, grow: bool) -> None:
        """Send a thread to `lane`: an idle one, else a new one if `grow` (or none runs yet)."""
        self._queue.put(lane)
        # Read without the lock: should a thread end right now, unseen, the lane's watch adds one.
        if grow or self._threads == 0:
            with self._lock:
                if self._idle == 0 and self._threads < self.max_threads and (grow or self._threads == 0):
                    self._threads += 1
                    threading.Thread(target=self._work, name="mcpkit worker", daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            try:
                lane = self._queue.get(timeout=IDLE_EXIT)
            except Empty:
                with self._lock:
                    self._idle -= 1
                    if self._queue.empty():
                        self._threads -= 1
                        return
                continue
            with self._lock:
                self._idle -= 1
            lane.serve()


POOL = Pool()


class Lane:
    """One session's sync calls on its asyncio loop, served by at most `cap` threads at once."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cap: int | None, pool: Pool = POOL) -> None:
        self.loop = loop
        self.cap = cap
        self.pool = pool
        self.token = anyio.lowlevel.current_token()
        self.threads = 0  # threads serving the lane, or sent to it
        self.finished = 0  # calls done: how the watch tells a stuck lane from a moving one
        self._jobs: deque[Job] = deque()
        self._results: list[Job] = []
        self._lock = threading.Lock()
        self._watch: asyncio.TimerHandle | None = None
        self._seen = 0

    def submit(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """`fn()` on a worker thread; await the future. Cancelled, the caller leaves at once; a call
        already running runs on (a thread cannot be interrupted) and its thread stays the lane's until
        it returns."""
        job = Job(fn, self.loop.create_future())
        with self._lock:  # a thread that finds the lane empty leaves it under the same lock
            self._jobs.append(job)
            first = self.threads == 0
            if first:
                self.threads = 1
        if first:
            self.pool.put(self, grow=False)
        if self._watch is None:
            self._seen = self.finished
            self._watch = self.loop.call_later(PATIENCE, self._check)
        return job.future

    def _add_thread(self, grow: bool) -> None:
        with self._lock:
            if self.cap is not None and self.threads >= self.cap:
                return
            self.threads += 1
        self.pool.put(self, grow)

    def _check(self) -> None:
        self._watch = None
        if self._results:  # held by a thread now in a slow call: they wait no longer
            self._deliver()
        if not self._jobs and self.threads == 0:
            return
        if self._jobs and self.finished == self._seen:  # calls wait, none finished: every thread is busy
            self._add_thread(grow=True)
        self._seen = self.finished
        self._watch = self.loop.call_later(PATIENCE, self._check)

    def serve(self) -> None:
        """On a worker thread: run the lane's calls until there are none; hand back their results."""
        owed_since: float | None = None
        if anyio_thread is not None:
            anyio_thread.current_token = self.token
        while True:
            try:
                job = self._jobs.popleft()
            except IndexError:
                with self._lock:
                    if not self._jobs:
                        self.threads -= 1
                        break
                continue
            if job.future.cancelled():  # its caller left before it started
                continue
            started = time.perf_counter()
            job.run()
            self.finished += 1  # a lost increment between two threads only delays one check
            with self._lock:
                self._results.append(job)
                first = len(self._results) == 1
            if first:
                owed_since = started
            if owed_since is not None and time.perf_counter() - owed_since > HOLD:
                self._wake()
                owed_since = None
        if owed_since is not None:
            self._wake()

    def _wake(self) -> None:
        with suppress(RuntimeError):  # the loop is closed: nobody waits for the results
            self.loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        with self._lock:
            results, self._results = self._results, []
        for job in results:
            future = job.future
            if not future.done():
                if job.error is not None:
                    future.set_exception(job.error)
                else:
                    future.set_result(job.value)
