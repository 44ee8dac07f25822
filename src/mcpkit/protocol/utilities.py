"""Params of the utility notifications (cancellation, progress, logging), built and read as pure functions."""

from __future__ import annotations

from typing import Any, TypeGuard

from .errors import INVALID_PARAMS, LocalError, RemoteError
from .jsonrpc import JSON
from .levels import severity

__all__ = ["cancel_params", "log_params", "progress_params", "read_cancel", "read_level", "read_progress"]


def _optional(params: JSON, **values: Any) -> JSON:
    params.update((key, value) for key, value in values.items() if value is not None)
    return params


def cancel_params(rid: str | int, reason: str | None) -> JSON:
    return _optional({"requestId": rid}, reason=reason or None)


def _is_id(value: Any) -> TypeGuard[str | int]:
    """A string or an integer, as request ids and progress tokens are (a bool is neither)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def read_cancel(params: Any) -> tuple[str | int, str | None] | None:
    """(request id, reason) of notifications/cancelled, or None when it names no valid request id.

    Such a notification cannot be answered, so a malformed one is ignored by whoever reads it.
    """
    rid = params.get("requestId") if isinstance(params, dict) else None
    if not _is_id(rid):
        return None
    reason = params.get("reason")
    return rid, reason if isinstance(reason, str) else None


def progress_params(token: str | int, progress: float, total: float | None, message: str | None) -> JSON:
    return _optional({"progressToken": token, "progress": progress}, total=total, message=message)


def read_progress(params: JSON) -> tuple[str | int, float, float | None, str | None] | None:
    """(token, progress, total, message) of a progress notification, or None if it is malformed."""
    token, progress = params.get("progressToken"), params.get("progress")
    if not _is_id(token) or not isinstance(progress, int | float) or isinstance(progress, bool):
        return None
    total, message = params.get("total"), params.get("message")
    return (
        token,
        progress,
        total if isinstance(total, int | float) else None,
        message if isinstance(message, str) else None,
    )


def read_level(params: JSON) -> str:
    """The level of logging/setLevel; -32602 for a name RFC 5424 does not have."""
    level = params.get("level")
    if not isinstance(level, str) or severity(level) is None:
        raise RemoteError(INVALID_PARAMS, f"Invalid params: {level!r} is not an RFC 5424 log level")
    return level


def log_params(level: str, data: Any, logger: str | None, threshold: str | None) -> JSON | None:
    """notifications/message params, or None when `level` is below the client's `threshold`."""
    rank = severity(level)
    if rank is None:
        raise LocalError(f"{level!r} is not an RFC 5424 log level")
    floor = severity(threshold) if threshold else None
    if floor is not None and rank < floor:
        return None
    return _optional({"level": level, "data": data}, logger=logger)
