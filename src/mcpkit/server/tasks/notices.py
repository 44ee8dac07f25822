"""Telling whoever follows a task that its status changed (optional in both eras; a client that
hears nothing still polls).

2025-11-25: `notifications/tasks/status` with the Task, to the requestor's session, without the
related-task `_meta` (utilities "Task Notifications"). 2026-07-28 (the tasks extension's "Task Status
Notifications"): `notifications/tasks` with the DetailedTask tasks/get would answer at that moment, on
each subscriptions/listen stream whose acknowledged `taskIds` name the task.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...protocol.errors import LocalError
from ...protocol.jsonrpc import JSON
from ...protocol.tasks import STATUS_NOTE, TASK_NOTE, detailed, utility_task
from ...protocol.versions import Feature, has, is_stateless
from .store import TaskRecord

if TYPE_CHECKING:
    from ...runtime.session import Session
    from ..subscriptions import Listener

__all__ = ["task_note", "tell"]

log = logging.getLogger("mcpkit")


async def tell(record: TaskRecord, session: Session | None, listeners: set[Listener]) -> None:
    """The status notification of `record` as it is now: to `session` (the requestor's, 2025-11-25) or
    to the `listeners` that follow it (2026-07-28). Never fails the change it reports."""
    if is_stateless(record.version):
        note = task_note(record)
        for listener in list(listeners):
            listener.offer(TASK_NOTE, note)
        return
    if session is None or not has(record.version, Feature.TASKS):
        return
    try:
        await session.notify(STATUS_NOTE, utility_task(record.fields()))
    except LocalError as exc:  # e.g. the session is closing: the requestor polls instead
        log.debug("task %s: no status notification (%s)", record.task_id, exc)


def task_note(record: TaskRecord) -> JSON:
    """The extension's notifications/tasks params: the DetailedTask tasks/get answers now."""
    return detailed(
        record.fields(), result=record.result, error=record.error, input_requests=record.input_requests
    )
