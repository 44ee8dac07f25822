"""The client's side of multi round-trip requests (2026-07-28 patterns "Multi Round-Trip Requests").

An input-required result lists what the server needs; the client answers each input request with
the same sampling / elicitation / roots handlers the handshake era uses, then retries the original
request (a new id) with `inputResponses` and, only if the server gave one, the untouched
`requestState`. The number of rounds is bounded so a server cannot keep a caller forever.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..protocol.errors import INVALID_PARAMS, RemoteError
from ..protocol.jsonrpc import JSON
from ..protocol.stateless import result_type

__all__ = ["drive_round_trips"]

Send = Callable[[JSON], Awaitable[JSON]]
Answer = Callable[[str, JSON], Awaitable[JSON]]


async def drive_round_trips(send: Send, answer: Answer, params: JSON, result: JSON, max_rounds: int) -> JSON:
    """Follow input-required results until a complete one; RemoteError past `max_rounds`."""
    rounds = 0
    while result_type(result) == "input_required":
        rounds += 1
        if rounds > max_rounds:
            raise RemoteError(INVALID_PARAMS, f"the server still needed input after {max_rounds} rounds")
        requests = result.get("inputRequests") or {}
        if not isinstance(requests, dict):
            raise RemoteError(INVALID_PARAMS, "the server sent inputRequests that is not an object")
        responses: JSON = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise RemoteError(INVALID_PARAMS, f"input request {key!r} names no method")
            inner = request.get("params")
            responses[key] = await answer(request["method"], inner if isinstance(inner, dict) else {})
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        retry["inputResponses"] = responses
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        result = await send(retry)
    return result
