"""Params of the utility notifications (cancellation, progress, logging), built and read as pure functions."""

from __future__ import annotations

from typing import Any

from .errors import INVALID_PARAMS, LocalError, RemoteError
from .levels import severity

__all__ = ["cancel_params", "log_params", "progress_params", "read_level", "read_progress"]

JSON = dict[str, Any]


def _optional(params: JSON, **values: Any) -> JSON:
    params.update((key, value) for key, value in values.items() if value is not None)
    return params


def cancel_params(rid: str | int, reason: str | None) -> JSON:
    return _optional({"requestId": rid}, reason=reason or None)


def progress_params(token: str | int, progress: float, total: float | None, message: str | None) -> JSON:
    return _optional({"progressToken": token, "progress": progress}, total=total, message=message)


def read_progress(params: JSON) -> tuple[str | int, float, float | None, str | None] | None:
    """(token, progress, total, message) of a progress notification, or None if it is malformed."""
    token, progress = params.get("progressToken"), params.get("progress")
    if not isinstance(token, str | int) or not isinstance(progress, int | float):
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
