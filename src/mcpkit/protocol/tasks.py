"""Tasks (the 2026-07-28 extension `io.modelcontextprotocol/tasks`, SEP-2663): status, transitions and
wire shapes. No clock here: times come in as seconds since the epoch.

A task-augmented tools/call is answered with a CreateTaskResult (`resultType: "task"`, the Task's
fields flat on the result); tasks/get answers a DetailedTask that inlines the result, the error or
the outstanding inputRequests; tasks/update carries inputResponses; tasks/cancel is an empty ack.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, Final

from .errors import INTERNAL_ERROR, InvalidParams, LocalError, MCPError
from .extensions import declared, missing_extension
from .jsonrpc import JSON

__all__ = [
    "RELATED_TASK",
    "STATUS_NOTE",
    "TASKS_EXTENSION",
    "TASK_NOTE",
    "Status",
    "advance",
    "client_supports",
    "created_result",
    "detailed",
    "needs_extension",
    "task_id_of",
    "utility_task",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
STATUS_NOTE: Final = "notifications/tasks/status"  # the 2025-11-25 utility's Task, on a status change
TASK_NOTE: Final = "notifications/tasks"  # the extension's DetailedTask, on subscriptions/listen


class Status(enum.Enum):
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL: Final = frozenset({Status.COMPLETED, Status.FAILED, Status.CANCELLED})
# "Task Status": working <-> input_required, either -> a terminal status, which never moves.
TRANSITIONS: Final[frozenset[tuple[Status, Status]]] = frozenset(
    {(Status.WORKING, Status.INPUT_REQUIRED), (Status.INPUT_REQUIRED, Status.WORKING)}
    | {(start, end) for start in (Status.WORKING, Status.INPUT_REQUIRED) for end in _TERMINAL}
)


def advance(current: Status, to: Status) -> Status:
    """The status after moving from `current` to `to`; LocalError for a move the spec has no arrow for."""
    if (current, to) not in TRANSITIONS:
        raise LocalError(f"a task cannot go from {current.value} to {to.value}")
    return to


def client_supports(client_capabilities: JSON) -> bool:
    """Whether the request's client capabilities declare the extension (per request in 2026-07-28)."""
    return declared(client_capabilities, TASKS_EXTENSION)


def needs_extension() -> MCPError:
    """-32021 with requiredCapabilities.extensions["io.modelcontextprotocol/tasks"] (SEP-2663)."""
    return missing_extension(TASKS_EXTENSION)


def task_id_of(params: JSON) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise InvalidParams("Invalid params: taskId must be a non-empty string")
    return task_id


def iso(seconds: float) -> str:
    """ISO 8601 in UTC, to the millisecond."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_fields(
    task_id: str,
    status: Status,
    created_at: float,
    updated_at: float,
    ttl_ms: int | None,
    poll_interval_ms: int | None,
    status_message: str | None = None,
) -> JSON:
    """The Task object: integer milliseconds for `ttlMs` and `pollIntervalMs` (SEP-2663 renames)."""
    task: JSON = {
        "taskId": task_id,
        "status": status.value,
        "createdAt": iso(created_at),
        "lastUpdatedAt": iso(updated_at),
        "ttlMs": ttl_ms,
    }
    if poll_interval_ms is not None:
        task["pollIntervalMs"] = poll_interval_ms
    if status_message is not None:
        task["statusMessage"] = status_message
    return task


RELATED_TASK: Final = "io.modelcontextprotocol/related-task"


def utility_task(task: JSON) -> JSON:
    """The 2025-11-25 Task: the same fields, with `ttl` and `pollInterval` (the extension renamed them)."""
    out = {k: v for k, v in task.items() if k not in ("ttlMs", "pollIntervalMs")}
    out["ttl"] = task.get("ttlMs")
    if "pollIntervalMs" in task:
        out["pollInterval"] = task["pollIntervalMs"]
    return out


def created_result(task: JSON) -> JSON:
    """CreateTaskResult: `Result & Task`, flat, `resultType: "task"`, no result, error or requests."""
    return {"resultType": "task", **task}


def detailed(task: JSON, *, result: JSON | None, error: JSON | None, input_requests: JSON | None) -> JSON:
    """tasks/get's DetailedTask: the status's own payload inlined (and `resultType: "complete"`)."""
    out: JSON = {**task}
    status = task["status"]
    if status == Status.COMPLETED.value and result is not None:
        # The schema's CallToolResult requires resultType (the extension's own example omits it;
        # the TypeScript tasks client follows the schema and rejects a result without it).
        out["result"] = {"resultType": "complete", **result}
    elif status == Status.FAILED.value and error is not None:
        out["error"] = error
    elif status == Status.INPUT_REQUIRED.value:
        out["inputRequests"] = input_requests or {}
    return out


def final_outcome(
    task_id: str, status: Status, result: dict[str, Any] | None, error: dict[str, Any] | None
) -> dict[str, Any]:
    """What tasks/result answers for an ended task (2025-11-25): exactly the underlying result, tagged
    with the task in `_meta` (related-task), or its error raised; a cancelled task is -32602."""
    if status in (Status.COMPLETED, Status.FAILED) and result is not None:  # failed: a tool's isError
        meta = result.get("_meta")
        tag = {RELATED_TASK: {"taskId": task_id}}
        return {**result, "_meta": {**(meta if isinstance(meta, dict) else {}), **tag}}
    if status is Status.FAILED and error is not None:
        raise MCPError(error.get("code", INTERNAL_ERROR), str(error.get("message", "")), error.get("data"))
    raise InvalidParams(f"Invalid params: task {task_id!r} was cancelled")
