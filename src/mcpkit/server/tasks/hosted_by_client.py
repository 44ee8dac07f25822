"""Asking the client to run sampling or elicitation as a task it hosts (the 2025-11-25 tasks utility,
server as the requestor): `await ctx.sample(..., as_task=True)` / `ctx.elicit(..., as_task=True)`.

When the client declared `tasks.requests.sampling.createMessage` (or `...elicitation.create`), the request
goes out with `task`, the client answers with a CreateTaskResult at once, and tasks/result, which the client
holds until its handler is done, brings the ordinary result (or the request's error). Without the
capability, or in any other version, it is the plain request (tasks "Capability Negotiation": requestors
SHOULD augment only what the receiver declared).
"""

from __future__ import annotations

from contextlib import suppress
from typing import Final

import anyio

from ...protocol.capabilities import declares
from ...protocol.errors import INVALID_PARAMS, MCPError, RemoteError
from ...protocol.jsonrpc import JSON
from ...protocol.lifecycle import Negotiated
from ...protocol.tasks import RELATED_TASK
from ...protocol.versions import Feature, has
from ..asking import Asker

__all__ = ["ask_as_task", "client_hosts"]

_CAPABILITY: Final = {
    "sampling/createMessage": ("tasks", "requests", "sampling", "createMessage"),
    "elicitation/create": ("tasks", "requests", "elicitation", "create"),
}
_CANCEL_WAIT: Final = 2.0  # seconds a tasks/cancel for an abandoned task may take


def client_hosts(negotiated: Negotiated, method: str) -> bool:
    """Whether the client declared it runs `method` as a task (2025-11-25 only)."""
    path = _CAPABILITY.get(method)
    return (
        path is not None
        and not negotiated.stateless
        and has(negotiated.version, Feature.TASKS)
        and declares(negotiated.client_capabilities, path)
    )


async def ask_as_task(
    asker: Asker, negotiated: Negotiated, method: str, params: JSON, key: str | None, as_task: bool | int
) -> JSON:
    """The client's answer to `method`, run as a task the client hosts when `as_task` (True, or the ttl to
    ask for in milliseconds) and the client declared it can; else the plain request. tasks/result waits
    as long as any ask does (the Server's `client_request_timeout`); giving up cancels the task."""
    if not isinstance(as_task, bool) and as_task < 1:
        raise ValueError("as_task takes True or a positive ttl in milliseconds")
    if as_task is False or not client_hosts(negotiated, method):
        return await asker.ask(method, params, key)
    task: JSON = {} if as_task is True else {"ttl": int(as_task)}
    created = await asker.ask(method, {**params, "task": task}, key)
    found = created.get("task")
    if not isinstance(found, dict):
        return created  # answered at once, as a receiver may
    task_id = found.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise RemoteError(INVALID_PARAMS, f"The client answered {method} with a task without a taskId")
    try:
        result = await asker.ask("tasks/result", {"taskId": task_id})
    except RemoteError:
        raise  # the request's own error, or the task is gone: either way it has ended
    except BaseException:  # cancelled or timed out here: the client's task is no longer wanted
        # suppressed: it ended meanwhile, or the client is gone
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_WAIT), suppress(MCPError):
            await asker.ask("tasks/cancel", {"taskId": task_id})
        raise
    return _untagged(result)


def _untagged(result: JSON) -> JSON:
    """The result as the plain request would have answered it: without the related-task tag."""
    meta = result.get("_meta")
    if not isinstance(meta, dict) or RELATED_TASK not in meta:
        return result
    rest = {k: v for k, v in meta.items() if k != RELATED_TASK}
    out = {k: v for k, v in result.items() if k != "_meta"}
    if rest:
        out["_meta"] = rest
    return out
