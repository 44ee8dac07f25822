"""The changes a task goes through, each a `Change` the store applies in one atomic step (so each is
computed on the task as it is now, and only moves it along an arrow of "Task Status"). A change made
by an older leg, or to a task that has ended, changes nothing: a cancelled task stays cancelled."""

from __future__ import annotations

from ...protocol.errors import INTERNAL_ERROR, error_object
from ...protocol.jsonrpc import JSON
from ...protocol.tasks import Status, advance
from ...protocol.versions import Feature, has, is_stateless
from .legs import Cancelled, Failed, NeedsInput, Outcome, Result
from .store import Change, TaskRecord

__all__ = ["answered", "cancelled", "lost", "moved", "running", "settled"]


def running(record: TaskRecord) -> bool:
    """Whether a leg runs for the task: working, or (2025-11-25, whose leg waits on the client's
    answer) input_required."""
    return record.status is Status.WORKING or (
        record.status is Status.INPUT_REQUIRED and not is_stateless(record.version)
    )


def settled(leg: int, outcome: Outcome) -> Change:
    """Leg `leg` of the task ended with `outcome` (engine.py `run`)."""

    def settle(task: TaskRecord) -> bool:
        if task.status.terminal or task.leg != leg:
            return False
        if task.cancel_requested:
            task.status = advance(task.status, Status.CANCELLED)
            return True
        match outcome:
            case Result(result):
                # 2025-11-25: "failed ... includes cases where the tool call result has isError set to
                # true"; the extension keeps such a task completed, its result carrying isError
                failed = result.get("isError") is True and has(task.version, Feature.TASKS)
                task.status = advance(task.status, Status.FAILED if failed else Status.COMPLETED)
                task.result = result
            case NeedsInput(need):
                task.answers.update(need.answers)
                task.input_requests = dict(need.requests)
                task.status = advance(task.status, Status.INPUT_REQUIRED)
            case Failed(error):
                task.status, task.error = advance(task.status, Status.FAILED), error
            case Cancelled():
                task.status = advance(task.status, Status.CANCELLED)
        return True

    return settle


def lost(runner: str, leg: int) -> Change:
    """Leg `leg`, which ran on worker `runner`, will never end: that worker stopped."""

    def fail(task: TaskRecord) -> bool:
        if task.runner != runner or task.leg != leg or not running(task):
            return False
        task.status = advance(task.status, Status.FAILED)
        task.status_message = "The worker running this task stopped before it finished"
        task.error = error_object(INTERNAL_ERROR, task.status_message, {"reason": "worker_lost"})
        return True

    return fail


def answered(responses: JSON, runner: str | None) -> Change:
    """tasks/update: answers for outstanding requests (others ignored, SEP-2663); once none is
    outstanding the task works again, in a new leg on `runner`. Of two such updates only one can
    make that move (the store's compare-and-set), so only one starts the leg."""

    def answer(task: TaskRecord) -> bool:
        if task.status is not Status.INPUT_REQUIRED:
            return False
        outstanding = task.input_requests
        took = [key for key, a in responses.items() if key in outstanding and isinstance(a, dict)]
        for key in took:
            task.answers[key] = responses[key]
            del outstanding[key]
        if not outstanding:
            task.status = advance(task.status, Status.WORKING)
            task.runner, task.leg = runner, task.leg + 1
        return bool(took)

    return answer


def cancelled(task: TaskRecord) -> bool:
    """tasks/cancel: an unfinished task is cancelled (and its running leg told by the engine)."""
    if task.status.terminal:
        return False
    task.cancel_requested = True
    task.status = advance(task.status, Status.CANCELLED)
    return True


def moved(to: Status) -> Change:
    """A 2025-11-25 leg asks (input_required) or got its answers (working)."""

    def move(task: TaskRecord) -> bool:
        if task.status.terminal or task.status is to:
            return False
        task.status = advance(task.status, to)
        return True

    return move
