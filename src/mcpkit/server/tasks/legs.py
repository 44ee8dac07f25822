"""A task's legs: one run of its tool, how it ended, and the Context the tool sees while it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ...protocol.errors import INTERNAL_ERROR, MCPError
from ...protocol.jsonrpc import JSON
from ...runtime._native import Detached
from ..asking import Asker
from ..context import Context
from ..round_trip import InputRequired, RoundTrip
from .store import TaskRecord

if TYPE_CHECKING:
    from ...runtime.session import Session

__all__ = [
    "Cancelled",
    "Failed",
    "Leg",
    "NeedsInput",
    "Outcome",
    "Result",
    "TaskContext",
    "answer_of",
    "either",
    "task_support",
]


@dataclass(frozen=True, slots=True)
class Result:
    """The tool returned `result` (a CallToolResult, maybe with isError)."""

    result: JSON


@dataclass(frozen=True, slots=True)
class NeedsInput:
    """The tool asked what the client has not answered yet (2026-07-28's round trips)."""

    need: InputRequired


@dataclass(frozen=True, slots=True)
class Failed:
    """The tool raised: `error` is its JSON-RPC error object."""

    error: JSON


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The leg was cancelled before the tool returned."""


Outcome = Result | NeedsInput | Failed | Cancelled


@dataclass(eq=False)
class Leg:
    """One run of a task's tool; `record` is set once the call is a task, `outcome` once it ended."""

    record: TaskRecord | None = None
    number: int = 0  # the task's leg this run is (TaskRecord.leg)
    created: anyio.Event = field(default_factory=lambda: anyio.Event())  # the record is in the store
    escalated: anyio.Event = field(default_factory=lambda: anyio.Event())  # ctx.as_task() was called
    done: anyio.Event = field(default_factory=lambda: anyio.Event())  # (anyio.Event loads modules: lazily)
    outcome: Outcome = field(default_factory=Cancelled)
    runner: Detached | None = None


class TaskContext(Context):
    """The Context of a leg: asks go through the task, progress and logs are not sent (the extension
    carries neither), `cancelled` is the task's cancellation."""

    __slots__ = ("leg",)

    def __init__(self, base: Context, leg: Leg, asker: Asker, session: Session | None = None) -> None:
        super().__init__(
            base.registry,
            session if session is not None else base.session,
            base.request_id,
            base.negotiated,
            asker,
            meta=base.meta,
            server=base.server,
            origin=base.origin,
        )
        self.leg = leg

    @property
    def cancelled(self) -> bool:
        return self.leg.record is not None and self.leg.record.cancel_requested

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        return

    async def as_task(self) -> None:
        if not self.leg.escalated.is_set():
            self.leg.escalated.set()
            await self.leg.created.wait()  # the client has its taskId before the work goes on


async def either(first: anyio.Event, second: anyio.Event) -> None:
    """Until one of the two is set."""
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(wait, first)
        tg.start_soon(wait, second)


def answer_of(outcome: Outcome, asker: RoundTrip) -> JSON:
    """What the request gets when its leg ended before it became a task."""
    match outcome:
        case Result(result):
            return result
        case NeedsInput(need):
            return asker.result(need)
        case Failed(error):
            code, message = error.get("code", INTERNAL_ERROR), error.get("message", "Internal error")
            raise MCPError(code, message, error.get("data"))
        case Cancelled():
            raise anyio.get_cancelled_exc_class()()


def task_support(task: bool | str) -> str:
    """A tool's task support from `@server.tool(task=...)`: forbidden, optional or required."""
    support = ("optional" if task else "forbidden") if isinstance(task, bool) else task
    if support not in ("forbidden", "optional", "required"):
        raise ValueError(f"task must be True, False, 'optional' or 'required', not {task!r}")
    return support
