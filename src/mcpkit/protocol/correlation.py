"""Request correlation in both directions: ids, what is pending, progress tokens and cancellation.

Spec: basic "Requests" (ids unique among a sender's requests in flight), utilities "Cancellation"
and "Progress". It knows nothing of methods, phases or eras: an inbound request only carries along
the agreement it is served under, for whoever answers it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import INVALID_REQUEST, LocalError, RemoteError
from .events import CancelledByPeer, ProgressReceived
from .jsonrpc import JSON, RequestId
from .lifecycle import Negotiated
from .utilities import progress_params, read_cancel, read_progress

__all__ = ["Correlation", "Inbound"]

Token = str | int
_TOKEN_TYPES = (str, int)  # a tuple: isinstance with it is cheaper than with the union


@dataclass(slots=True)
class Inbound:
    """A request the peer sent that this side still owes an answer."""

    method: str
    negotiated: Negotiated  # the agreement it is served under: the session's, or its own (stateless)
    progress_token: Token | None
    log_level: str | None = None  # a stateless request's own `_meta` logLevel
    last_progress: float | None = None
    cancelled: bool = False


class Correlation:
    """Our requests awaiting a response, and the peer's requests awaiting ours."""

    def __init__(self, ids: Iterator[RequestId] | None = None) -> None:
        # our request ids; a transport may number them from a sequence shared by several connections
        self.ids: Iterator[RequestId] = ids if ids is not None else itertools.count(1)
        self._tokens = itertools.count(1)
        self._outbound: dict[RequestId, str] = {}  # id -> method
        self._token_of: dict[RequestId, Token] = {}
        self._progress_of: dict[Token, RequestId] = {}
        self._inbound: dict[RequestId, Inbound] = {}

    # ---- ours ------------------------------------------------------------------------------

    def open(self, method: str, params: JSON, progress: bool = False) -> tuple[RequestId, JSON]:
        """A fresh id for our request, and its params; `progress` gives it a progress token if it has
        none. Progress on any token the params carry is reported against this id."""
        rid = next(self.ids)
        self._outbound[rid] = method
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if progress and not isinstance(token, str | int):
            token = next(self._tokens)
            params = {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), "progressToken": token}}
        if isinstance(token, str | int):
            self._progress_of[token] = rid
            self._token_of[rid] = token
        return rid, params

    def close(self, rid: RequestId | None) -> str | None:
        """Stop awaiting our request `rid` (answered, failed or cancelled); its method, or None if
        it was not pending (a late answer, or an id we never used)."""
        if rid is None:
            return None
        method = self._outbound.pop(rid, None)
        token = self._token_of.pop(rid, None)
        if token is not None:
            self._progress_of.pop(token, None)
        return method

    def progressed(self, params: JSON) -> list[ProgressReceived]:
        """Progress the peer reports on one of our pending requests; nothing for an unknown token."""
        parsed = read_progress(params)
        rid = self._progress_of.get(parsed[0]) if parsed is not None else None
        if parsed is None or rid is None:
            return []
        return [ProgressReceived(rid, parsed[1], parsed[2], parsed[3])]

    # ---- theirs ----------------------------------------------------------------------------

    def expect_new(self, rid: RequestId) -> None:
        """-32600 when the peer reuses the id of a request of its own still in flight."""
        if rid in self._inbound:
            raise RemoteError(INVALID_REQUEST, f"Invalid Request: id {rid!r} is already in use")

    def received(
        self, rid: RequestId, method: str, params: JSON, negotiated: Negotiated, log_level: str | None
    ) -> None:
        """Owe the peer an answer to `rid`; -32600 if its id is already in use (see `expect_new`)."""
        inbound = self._inbound
        if rid in inbound:
            self.expect_new(rid)
        meta = params.get("_meta")
        token = meta.get("progressToken") if meta is not None and isinstance(meta, dict) else None
        token = token if isinstance(token, _TOKEN_TYPES) else None
        inbound[rid] = Inbound(method, negotiated, token, log_level)

    def owed(self, rid: RequestId | None) -> Inbound | None:
        """The peer's request `rid` while it is still owed an answer."""
        return self._inbound.get(rid) if rid is not None else None

    def finish(self, rid: RequestId) -> Inbound | None:
        """Stop owing `rid`; the request, or None when no answer may be sent (unknown or cancelled)."""
        state = self._inbound.pop(rid, None)
        return None if state is None or state.cancelled else state

    def peer_cancelled(self, params: JSON) -> list[CancelledByPeer]:
        """utilities "Cancellation": unknown, finished or malformed ids are ignored."""
        parsed = read_cancel(params)
        state = self._inbound.get(parsed[0]) if parsed is not None else None
        if parsed is None or state is None or state.cancelled:
            return []
        state.cancelled = True
        return [CancelledByPeer(*parsed)]

    def is_cancelled(self, rid: RequestId) -> bool:
        state = self._inbound.get(rid)
        return state is not None and state.cancelled

    def progress(
        self, rid: RequestId, progress: float, total: float | None, message: str | None
    ) -> JSON | None:
        """notifications/progress params for the peer's request `rid`, or None when it asked for none
        or is finished. utilities "Progress": the value MUST increase with each notification."""
        state = self._inbound.get(rid)
        if state is None or state.progress_token is None or state.cancelled:
            return None
        if state.last_progress is not None and progress <= state.last_progress:
            raise LocalError(f"progress must increase: {progress} after {state.last_progress}")
        state.last_progress = progress
        return progress_params(state.progress_token, progress, total, message)
