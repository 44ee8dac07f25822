"""A 2025-11-25 task's leg talks to the client over the session (the utility has no inputRequests).

Its asks are requests tagged with the task (utilities "Associating Task-Related Messages": MUST), and
while one is unanswered the task is `input_required`, `working` again once answered ("Input Required
Status"). Its progress goes on the progressToken of the tools/call that created it, which "remains
valid throughout the task lifetime" ("Task Progress Notifications"), and stops once the task has ended.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ..protocol.errors import LocalError
from ..protocol.tasks import RELATED_TASK, Status
from ..protocol.utilities import progress_params
from .context import Context
from .task_changes import moved
from .task_legs import Leg, TaskContext
from .task_store import Change, TaskRecord

if TYPE_CHECKING:
    from ..runtime.session import Session

__all__ = ["UtilityAsker", "UtilityContext"]

JSON = dict[str, Any]


class Engine(Protocol):
    async def change(self, task_id: str, ctx: Context, change: Change) -> tuple[TaskRecord | None, bool]: ...


def related(task_id: str, params: JSON) -> JSON:
    """`params` with the related-task `_meta` added (a copy)."""
    meta = params.get("_meta")
    return {
        **params,
        "_meta": {**(meta if isinstance(meta, dict) else {}), RELATED_TASK: {"taskId": task_id}},
    }


class UtilityAsker:
    """Asks over its leg's session (`ctx.session`) for task `task_id`; input_required while any ask is
    unanswered."""

    def __init__(self, task_id: str, engine: Engine, timeout: float | None) -> None:
        self.task_id, self.engine, self.timeout = task_id, engine, timeout
        self.ctx: Context | None = None  # the leg's UtilityContext, which makes this asker
        self.asking = 0
        self.answers: dict[str, JSON] = {}  # each ask is answered over the leg's session as it is made

    async def ask(self, method: str, params: JSON, key: str | None = None) -> JSON:
        assert self.ctx is not None
        async with self.waiting():
            # related to no request: the tools/call was answered, so it goes on the standalone stream
            params = related(self.task_id, params)
            return await self.ctx.session.request(method, params, timeout=self.timeout)

    async def ask_many(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        answers: dict[str, JSON] = {}

        async def one(key: str, request: JSON) -> None:
            answers[key] = await self.ask(request["method"], request.get("params") or {})

        async with self.waiting(), anyio.create_task_group() as tg:
            for key, request in requests.items():
                tg.start_soon(one, key, request)
        return answers

    @asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        self.asking += 1
        if self.asking == 1:
            await self.move(Status.INPUT_REQUIRED)
        try:
            yield
        finally:
            self.asking -= 1
            if self.asking == 0:
                with anyio.CancelScope(shield=True):
                    await self.move(Status.WORKING)

    async def move(self, to: Status) -> None:
        """The task to `to`, unless it has ended meanwhile (a cancelled task stays cancelled)."""
        assert self.ctx is not None
        await self.engine.change(self.task_id, self.ctx, moved(to))


class UtilityContext(TaskContext):
    """A 2025-11-25 task leg's Context: progress on the creating request's token, logs and asks on
    `session` (the client's session, for as long as the leg runs), asks timing out after `timeout`."""

    __slots__ = ("last_progress", "token")

    def __init__(
        self, base: Context, leg: Leg, session: Session, engine: Engine, timeout: float | None
    ) -> None:
        assert leg.record is not None
        asker = UtilityAsker(leg.record.task_id, engine, timeout)
        super().__init__(base, leg, asker, session)
        asker.ctx = self
        token = base.meta.get("progressToken")
        self.token = token if isinstance(token, str | int) and not isinstance(token, bool) else None
        self.last_progress: float | None = None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        record = self.leg.record
        if self.token is None or record is None or record.cancel_requested or record.status.terminal:
            return
        if self.last_progress is not None and progress <= self.last_progress:
            raise LocalError(f"progress must increase: {progress} after {self.last_progress}")
        self.last_progress = progress
        params = related(record.task_id, progress_params(self.token, progress, total, message))
        await self.session.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        note = self.session.connection.log(level, data, logger)  # at the session's level
        if note is not None and self.leg.record is not None:
            note["params"] = related(self.leg.record.task_id, note["params"])
        await self.session.send_message(note)
