"""Tasks on the server: a tools/call that becomes a durable record whose work runs in legs, outside the
request. The engine keeps them (its TaskStore), runs their legs, and applies every change of a task;
what differs between the eras lives in the dialects (dialect.py, extension.py, utility.py).

A leg runs the tool from the top with the answers gathered so far (the multi round-trip model of
2026-07-28): an ask with no answer ends the leg and parks the task in input_required with that request
outstanding; tasks/update brings answers, and once none is outstanding the next leg starts. So no leg
ever waits on a client, and everything but a running leg lives in the TaskStore.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import TYPE_CHECKING, Any

import anyio

from ...protocol.errors import SERVER_BUSY, InvalidParams, MCPError, to_wire_error
from ...protocol.jsonrpc import JSON
from ...protocol.tasks import Status, client_supports, needs_extension, task_id_of
from ...runtime._native import spawn_detached
from ..context import Context
from ..round_trip import InputRequired
from .changes import lost, running, settled
from .counts import StatusCounts
from .legs import Cancelled, Failed, Leg, NeedsInput, Result, TaskContext
from .notices import task_note, tell
from .store import Change, InMemoryTaskStore, TaskRecord, TaskStore
from .workers import OneProcess, TaskCluster

if TYPE_CHECKING:
    from ...runtime.session import Session
    from ..peers import Peers
    from ..tools import Tool

__all__ = ["TaskEngine"]

log = logging.getLogger("mcpkit")

_POLL_S = 0.05  # how often a waiting tasks/result reads the store when other workers may change it
_LOST_EVERY = 10  # ... and every this many reads, checks that the leg's worker still runs


class TaskEngine:
    """Creates, runs and answers for tasks; `store` keeps them (InMemoryTaskStore by default).

    `ttl_ms`: how long a task is kept after its creation (its `ttlMs`); `anonymous_ttl_ms` (lower):
    that of a task no access token authorized. `poll_interval_ms`: the polling interval suggested to
    clients; `max_live_per_owner`: how many unfinished tasks one principal, or one unauthenticated
    caller, may hold: past it a call is refused with -32010. `workers`: where legs run, this process
    alone by default (workers.py); a cluster's engine is `RedisBackplane.tasks()`.
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        workers: TaskCluster | None = None,
        ttl_ms: int = 3_600_000,
        anonymous_ttl_ms: int = 600_000,
        poll_interval_ms: int = 500,
        max_live_per_owner: int = 100,
    ) -> None:
        if min(ttl_ms, anonymous_ttl_ms, poll_interval_ms, max_live_per_owner) < 1:
            raise ValueError("task ttl, poll interval and cap must be positive")
        self.anonymous_ttl_ms = min(anonymous_ttl_ms, ttl_ms)
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_live = max_live_per_owner
        self.legs: dict[str, Leg] = {}  # the legs running in this process, by task id
        self.workers: TaskCluster = workers if workers is not None else OneProcess()
        self._waiters: dict[str, set[anyio.Event]] = {}  # set by a task's next change (tasks/result)
        self.counts = StatusCounts()  # `counts.measure(metrics)` reports them

    def cancel_here(self, task_id: str) -> None:
        """Another worker cancelled a task whose leg may run here."""
        leg = self.legs.pop(task_id, None)
        if leg is not None and leg.runner is not None:
            leg.runner.cancel()

    # ---- creating ----------------------------------------------------------------------------

    async def create(
        self, tool: Tool, arguments: JSON | None, ctx: Context, owner: str | None, answers: JSON, ttl_ms: int
    ) -> TaskRecord:
        """A new task of `owner` in the store (durably, before its id is sent); -32010 past the owner's
        cap or when the store is full."""
        now = time.time()
        record = TaskRecord(
            runner=self.workers.worker,
            task_id=secrets.token_urlsafe(24),  # the id is all a caller needs: unguessable
            owner=owner,
            tool=tool.name,
            arguments=arguments,
            client=ctx.client_capabilities,
            version=ctx.negotiated.version,
            created_at=now,
            updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            answers=dict(answers),
        )
        if not await self.store.create(record, self.max_live):
            raise MCPError(SERVER_BUSY, f"Too many unfinished tasks (at most {self.max_live} per caller)")
        self.counts.entered(record.status)
        return record

    def ttl_for(self, ctx: Context) -> int:
        """An anonymous caller's tasks are kept for less (`anonymous_ttl_ms`)."""
        return self.ttl_ms if ctx.origin is not None and ctx.origin.principal else self.anonymous_ttl_ms

    # ---- running legs ------------------------------------------------------------------------

    def start(
        self, leg: Leg, tool: Tool, arguments: JSON | None, ctx: TaskContext, mask: bool, peers: Peers
    ) -> None:
        """Run `leg` of `tool` outside the request (`mask`: the Server's `mask_errors`); its outcome is
        written on its task, if it is one by then."""
        leg.runner = spawn_detached(lambda: self.run(leg, tool, arguments, ctx, mask, peers))

    async def run(
        self, leg: Leg, tool: Tool, arguments: JSON | None, ctx: TaskContext, mask: bool, peers: Peers
    ) -> None:
        """Run `leg` here and now (a 2025-11-25 leg: inside the session that outlives it)."""
        try:
            leg.outcome = Result(await tool.call(arguments, ctx, ctx.negotiated.version, mask_errors=mask))
        except InputRequired as need:
            leg.outcome = NeedsInput(need)
        except MCPError as exc:
            leg.outcome = Failed(to_wire_error(exc, ctx.negotiated.version))
        except anyio.get_cancelled_exc_class():
            leg.outcome = Cancelled()
            raise
        except Exception as exc:
            log.exception("task leg of %r failed", tool.name)
            leg.outcome = Failed(to_wire_error(exc))
        finally:
            leg.done.set()
            with anyio.CancelScope(shield=True):
                await self._settle(leg, ctx.session, peers)

    async def _settle(self, leg: Leg, session: Session, peers: Peers) -> None:
        """Write a finished leg's outcome on its task (a leg that ended before it was one has none)."""
        if leg.record is None:
            return
        await leg.created.wait()
        task_id = leg.record.task_id
        if self.legs.get(task_id) is leg:
            del self.legs[task_id]
        outcome = settled(leg.number, leg.outcome)
        try:
            await self.change(task_id, session, peers, outcome)
        except MCPError as exc:  # a shared store failed it: unwritten, or written and not confirmed
            log.warning("the outcome of task %s is not stored for sure (%s): trying again", task_id, exc)
            spawn_detached(lambda: self._settle_again(task_id, session, peers, outcome))

    async def _settle_again(self, task_id: str, session: Session, peers: Peers, outcome: Change) -> None:
        """Write a leg's outcome the store failed, until it takes it (the change is a compare-and-set:
        written once, whoever wins) or the task would have expired anyway."""
        deadline, pause = time.monotonic() + self.ttl_ms / 1000, 0.25
        while time.monotonic() < deadline:
            await anyio.sleep(pause)
            pause = min(pause * 2, 5.0)
            try:
                await self.change(task_id, session, peers, outcome)
            except MCPError:
                continue
            log.warning("the outcome of task %s is stored now", task_id)
            return

    async def change(
        self, task_id: str, session: Session | None, peers: Peers, change: Change
    ) -> tuple[TaskRecord | None, bool]:
        """Apply `change` to the task in one atomic step of the store and, when it changed, tell
        whoever follows it (notices.py) and whoever waits here: the task as kept, and whether it changed."""

        moved: list[Status] = []  # the status the change entered, if it changed the status

        def stamped(record: TaskRecord) -> bool:
            was = record.status
            if not change(record):
                return False
            record.updated_at = time.time()
            moved[:] = [record.status] if record.status is not was else []
            return True

        record, changed = await self.store.update(task_id, stamped)
        if changed and record is not None:
            for status in moved:
                self.counts.entered(status)
            for woken in self._waiters.pop(task_id, ()):
                woken.set()
            await tell(record, session, peers.listeners)
        return record, changed

    # ---- answering for tasks -----------------------------------------------------------------

    async def find(self, params: JSON, owner: str | None) -> TaskRecord:
        """The task a tasks/* request names: -32602 for an unknown id (or another owner's: the same
        answer, so an id learnt elsewhere reveals nothing)."""
        task_id = task_id_of(params)
        record = await self.store.get(task_id)
        if record is None or record.owner != owner:
            raise InvalidParams(f"Invalid params: no task {task_id!r}")
        return record

    async def unless_lost(self, record: TaskRecord, session: Session, peers: Peers) -> TaskRecord:
        """The task, failed if its leg runs on a worker that has stopped (it would never end)."""
        runner = record.runner
        if runner is None or runner == self.workers.worker or not running(record):
            return record
        if await self.workers.alive(runner):
            return record
        found, _ = await self.change(record.task_id, session, peers, lost(runner, record.leg))
        return found if found is not None else record

    async def stop_leg(self, record: TaskRecord) -> None:
        """A cancelled task's leg stops: here, or on the worker running it."""
        leg = self.legs.pop(record.task_id, None)
        if leg is not None and leg.runner is not None:
            await leg.runner.aclose()
        elif record.runner not in (None, self.workers.worker):
            await self.workers.cancel_elsewhere(record.task_id)

    async def ended(self, record: TaskRecord, session: Session, peers: Peers) -> TaskRecord:
        """The task once it has ended. In one process every change goes through `change`, which wakes
        this; when other workers may change it, the store is read every 50 ms too, and now and then
        the leg's worker is checked (a leg whose worker died never ends)."""
        task_id, polls = record.task_id, 0
        while True:
            woken = anyio.Event()  # registered before the read: a change after it sets this
            self._waiters.setdefault(task_id, set()).add(woken)
            try:
                found = await self.store.get(task_id)
                if found is None:
                    raise InvalidParams(f"Invalid params: task {task_id!r} expired")
                if self.workers.worker is not None and polls % _LOST_EVERY == _LOST_EVERY - 1:
                    found = await self.unless_lost(found, session, peers)
                if found.status.terminal:
                    return found
                polls += 1
                with anyio.move_on_after(self._patience(found)):
                    await woken.wait()
            finally:
                self._forget(task_id, woken)

    def _forget(self, task_id: str, woken: anyio.Event) -> None:
        waiters = self._waiters.get(task_id)
        if waiters is not None:
            waiters.discard(woken)
            if not waiters:
                del self._waiters[task_id]

    def _patience(self, record: TaskRecord) -> float:
        """How long to wait for a change here before reading the store again: until the task expires
        in one process, a poll's interval when other workers may change it."""
        if self.workers.worker is not None:
            return _POLL_S
        return max(0.0, record.expires_at() - time.time())

    async def followed(self, ctx: Context, task_ids: Any, owner: str | None) -> list[JSON]:
        """subscriptions/listen's `taskIds`: the DetailedTask of each of `owner`'s tasks named (at most
        `max_live`), the ones its notifications/tasks will follow; -32021 without the extension."""
        if not client_supports(ctx.client_capabilities):
            raise needs_extension()
        if not isinstance(task_ids, list):
            raise InvalidParams("Invalid params: taskIds must be an array of task ids")
        found = []
        for task_id in task_ids[: self.max_live]:
            record = await self.store.get(task_id) if isinstance(task_id, str) else None
            if record is not None and record.owner == owner:
                found.append(task_note(record))
        return found
