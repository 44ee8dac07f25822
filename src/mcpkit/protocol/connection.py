"""The sans-I/O MCP connection: messages in, events out; calls in, messages out.

A Connection does no I/O and keeps no clock. It enforces the lifecycle, the capability table, id
correlation in both directions, cancellation and progress bookkeeping. A driver feeds it decoded
messages with `receive` and writes whatever messages its methods and `SendMessage` events hand back.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from . import capabilities as caps
from . import events as ev
from . import jsonrpc as rpc
from .capabilities import Owner, Role
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    RESOURCE_NOT_FOUND,
    CapabilityError,
    LocalError,
    RemoteError,
    to_wire_error,
)
from .jsonrpc import ErrorResponse, InvalidMessage, Notification, Request, RequestId, Response
from .lifecycle import Negotiated, Phase, accept_initialize, check_initialize_result, initialize_params
from .modern import SUBSCRIPTION_ID, finish_result, is_modern_request, read_request_meta, request_meta
from .utilities import cancel_params, log_params, progress_params, read_cancel, read_level, read_progress
from .versions import LATEST, SUPPORTED_VERSIONS, Feature, has, is_modern, negotiate

__all__ = ["Connection"]

JSON = dict[str, Any]


@dataclass(slots=True)
class _Inbound:
    method: str
    progress_token: str | int | None
    last_progress: float | None = None
    cancelled: bool = False
    negotiated: Negotiated | None = None  # set for a stateless (2026-07-28) request
    log_level: str | None = None  # that request's io.modelcontextprotocol/logLevel


class Connection:
    """One side of an MCP conversation."""

    def __init__(
        self,
        role: Role,
        *,
        info: JSON,
        capabilities: JSON,
        instructions: str | None = None,
        versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        max_depth: int = rpc.DEFAULT_MAX_DEPTH,
    ) -> None:
        self.role = role
        self.info = info
        self.capabilities = capabilities
        self.instructions = instructions
        self.versions = versions
        self.max_depth = max_depth
        self.phase = Phase.NEW
        self.negotiated: Negotiated | None = None
        self.peer_initialized = False  # server: the client sent notifications/initialized
        self.log_level: str | None = None  # server: set by logging/setLevel; client: sent in `_meta`
        self.serves_modern = role is Role.SERVER and any(is_modern(v) for v in versions)
        self.modern: Negotiated | None = None  # client: the stateless agreement, once adopted
        self.server_info_in_results = True  # 2026-07-28 basic "_meta": SHOULD, unless configured not to
        self._ids = itertools.count(1)
        self._outbound: dict[RequestId, str] = {}  # id -> method
        self._token_of: dict[RequestId, str | int] = {}
        self._progress_of: dict[str | int, RequestId] = {}
        self._inbound: dict[RequestId, _Inbound] = {}
        self._init_id: RequestId | None = None

    # ---- inbound ---------------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | str) -> list[ev.Event]:
        """Decode one framed message and receive it; undecodable input becomes an error reply."""
        try:
            obj = rpc.decode(data, self.max_depth)
        except InvalidMessage as exc:
            return [ev.SendMessage(rpc.error_message(None, exc.to_wire()))]
        return self.receive(obj)

    def receive(self, obj: Any) -> list[ev.Event]:
        try:
            message = rpc.classify(obj)
        except InvalidMessage as exc:
            if exc.response:
                return self._malformed_response(exc)
            return [ev.SendMessage(rpc.error_message(exc.request_id, exc.to_wire()))]
        if isinstance(message, Request):
            return self._receive_request(message)
        if isinstance(message, Notification):
            return self._receive_notification(message)
        return self._receive_response(message)

    def _receive_request(self, request: Request) -> list[ev.Event]:
        rid, method = request.id, request.method
        if self._is_modern(request):
            return self._receive_modern(request)
        try:
            rule = self._inbound_rule(method, notification=False)
            if rid in self._inbound:
                raise RemoteError(INVALID_REQUEST, f"Invalid Request: id {rid!r} is already in use")
            if method == "initialize" and self.role is Role.SERVER:
                return self._accept_initialize(rid, request.params)
            if self.phase is not Phase.READY and not rule.before_ready:
                raise RemoteError(INVALID_REQUEST, f"Invalid Request: {method!r} before initialization")
            if method == "ping":
                return [ev.SendMessage(rpc.result_message(rid, {}))]
            if method == "logging/setLevel":
                self.log_level = read_level(request.params)
                return [ev.SendMessage(rpc.result_message(rid, {}))]
        except RemoteError as exc:
            return [ev.SendMessage(rpc.error_message(rid, exc.to_wire()))]
        self._inbound[rid] = _Inbound(method, _progress_token(request.params))
        return [ev.RequestReceived(rid, method, request.params)]

    def _is_modern(self, request: Request) -> bool:
        """versioning "Backward Compatibility": a request with the modern `_meta` is served statelessly;
        before any handshake, only what the initialize era allows first (initialize, ping) is legacy."""
        if not self.serves_modern:
            return False
        if is_modern_request(request.params):
            return True
        if self.phase is not Phase.NEW:
            return False
        rule = caps.METHODS.get(request.method)
        return not (rule is not None and rule.handshake and rule.before_ready and not rule.notification)

    def _receive_modern(self, request: Request) -> list[ev.Event]:
        rid, method, params = request.id, request.method, request.params
        try:
            meta = read_request_meta(params, self.versions)
            caps.inbound_rule(method, self.role, False, self.capabilities, modern=True)
            if rid in self._inbound:
                raise RemoteError(INVALID_REQUEST, f"Invalid Request: id {rid!r} is already in use")
        except RemoteError as exc:
            return [ev.SendMessage(rpc.error_message(rid, exc.to_wire()))]
        negotiated = Negotiated(
            meta.version,
            meta.client_info,
            meta.client_capabilities,
            self.info,
            self.capabilities,
            self.instructions,
        )
        state = _Inbound(method, _progress_token(params), negotiated=negotiated, log_level=meta.log_level)
        self._inbound[rid] = state
        return [ev.RequestReceived(rid, method, params, negotiated)]

    def _inbound_rule(self, method: str, notification: bool) -> caps.Rule:
        modern = self.modern is not None  # a client that adopted 2026-07-28
        return caps.inbound_rule(method, self.role, notification, self.capabilities, modern)

    def _accept_initialize(self, rid: RequestId, params: JSON) -> list[ev.Event]:
        if self.phase is not Phase.NEW:
            raise RemoteError(INVALID_REQUEST, "Invalid Request: initialize was already received")
        negotiated, result = accept_initialize(
            params, self.versions, self.info, self.capabilities, self.instructions
        )
        self.negotiated, self.phase = negotiated, Phase.READY
        return [ev.SendMessage(rpc.result_message(rid, result)), ev.Ready(negotiated)]

    def _receive_notification(self, note: Notification) -> list[ev.Event]:
        method, params = note.method, note.params
        try:
            rule = self._inbound_rule(method, notification=True)
        except RemoteError:
            return []  # a notification cannot be answered; an unknown one is ignored
        if rule.capability and rule.owner is Owner.SENDER and not self._peer_declares(rule.capability):
            return []  # the peer did not declare it may send this
        if method == "notifications/cancelled":
            return self._peer_cancelled(params)
        if method == "notifications/progress":
            return self._progress_received(params)
        if method == "notifications/initialized":
            self.peer_initialized = True
        return [ev.NotificationReceived(method, params)]

    def _peer_cancelled(self, params: JSON) -> list[ev.Event]:
        parsed = read_cancel(params)
        state = self._inbound.get(parsed[0]) if parsed is not None else None
        # utilities "Cancellation": unknown or finished ids are ignored; initialize cannot be cancelled.
        if parsed is None or state is None or state.cancelled or state.method == "initialize":
            return []
        state.cancelled = True
        return [ev.CancelledByPeer(*parsed)]

    def _progress_received(self, params: JSON) -> list[ev.Event]:
        parsed = read_progress(params)
        rid = self._progress_of.get(parsed[0]) if parsed is not None else None
        if parsed is None or rid is None:
            return []
        return [ev.ProgressReceived(rid, parsed[1], parsed[2], parsed[3])]

    def _receive_response(self, response: Response | ErrorResponse) -> list[ev.Event]:
        rid = response.id
        method = self._outbound.pop(rid, None) if rid is not None else None
        if method is None or rid is None:
            return []  # a late response to a cancelled or unknown request is ignored
        self._forget_progress(rid)
        if isinstance(response, ErrorResponse):
            if method == "initialize":
                self.phase = Phase.NEW
            return [ev.ErrorReceived(rid, RemoteError.from_wire(response.error))]
        if method == "initialize":
            return self._initialized(rid, response.result)
        return [ev.ResponseReceived(rid, response.result)]

    def _malformed_response(self, exc: InvalidMessage) -> list[ev.Event]:
        """A malformed response is never answered; the request it names fails at once instead."""
        rid = exc.request_id
        method = self._outbound.pop(rid, None) if rid is not None else None
        if method is None or rid is None:
            return []
        self._forget_progress(rid)
        if method == "initialize":
            self.phase = Phase.NEW
        peer = self.role.peer.value
        error = RemoteError(exc.code, f"The {peer} sent a malformed response to {method!r}: {exc.message}")
        return [ev.ErrorReceived(rid, error)]

    def _initialized(self, rid: RequestId, result: JSON) -> list[ev.Event]:
        try:
            negotiated = check_initialize_result(result, self.info, self.capabilities, self.versions)
        except RemoteError as exc:
            self.phase = Phase.NEW
            return [ev.ErrorReceived(rid, exc)]
        self.negotiated, self.phase = negotiated, Phase.READY
        done = ev.SendMessage(rpc.notification_message("notifications/initialized", None))
        return [ev.ResponseReceived(rid, result), done, ev.Ready(negotiated)]

    # ---- outbound --------------------------------------------------------------------------

    def initialize(self, version: str = LATEST) -> tuple[RequestId, JSON]:
        """The client's first message."""
        if self.role is not Role.CLIENT or self.phase is not Phase.NEW:
            raise LocalError("initialize is sent once, by the client, first")
        self.phase = Phase.INITIALIZING
        rid = next(self._ids)
        self._outbound[rid] = "initialize"
        return rid, rpc.request_message(
            rid, "initialize", initialize_params(version, self.capabilities, self.info)
        )

    def assume(self, version: str) -> None:
        """The server's side, when its transport serves a handshake-era message without any handshake (a
        server keeping no HTTP sessions): proceed as if a client that declared nothing had initialized
        with `version`, negotiated as initialize would be."""
        if self.role is not Role.SERVER or self.phase is not Phase.NEW:
            raise LocalError("only a server that has not been initialized assumes a version")
        agreed = negotiate(version, self.versions)
        self.negotiated = Negotiated(agreed, {}, {}, self.info, self.capabilities, self.instructions)
        self.phase, self.peer_initialized = Phase.READY, True

    def adopt_modern(self, negotiated: Negotiated) -> None:
        """The client's side: speak the stateless era from now on (after server/discover, or pinned)."""
        if self.role is not Role.CLIENT or not is_modern(negotiated.version):
            raise LocalError("only a client adopts a 2026-07-28 version")
        self.modern = self.negotiated = negotiated
        self.phase = Phase.READY

    def send_request(self, method: str, params: JSON | None = None) -> tuple[RequestId, JSON]:
        """Build an outbound request; raise CapabilityError if the peer did not declare what it needs."""
        params = params or {}
        rule = self._outbound_rule(method, notification=False)
        if self.phase is not Phase.READY and not rule.before_ready:
            raise LocalError(f"cannot send {method!r} before initialization completes")
        if self.modern is not None:
            params = self._with_request_meta(params, self.modern.version)
        finer = caps.param_capability(method, params, self._peer_capabilities())
        if finer and not self._peer_declares(finer):
            raise CapabilityError(f"the {self.role.peer.value} did not declare {'.'.join(finer)!r}")
        rid = next(self._ids)
        self._outbound[rid] = method
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, str | int):
            self._progress_of[token] = rid
            self._token_of[rid] = token
        return rid, rpc.request_message(rid, method, params)

    def modern_request(self, method: str, version: str, params: JSON | None = None) -> tuple[RequestId, JSON]:
        """The client's side: a stateless request sent before any agreement (server/discover, a probe)."""
        rid = next(self._ids)
        self._outbound[rid] = method
        return rid, rpc.request_message(rid, method, self._with_request_meta(params or {}, version))

    def _with_request_meta(self, params: JSON, version: str) -> JSON:
        meta = params.get("_meta")
        fields = request_meta(version, self.capabilities, self.info, self.log_level)
        return {**params, "_meta": {**meta, **fields} if isinstance(meta, dict) else fields}

    def send_notification(self, method: str, params: JSON | None = None) -> JSON:
        rule = self._outbound_rule(method, notification=True)
        if self.phase is not Phase.READY and not rule.before_ready:
            raise LocalError(f"cannot send {method!r} before initialization completes")
        return rpc.notification_message(method, params)

    def subscription_notification(self, method: str, params: JSON | None, subscription_id: RequestId) -> JSON:
        """A notification on a subscriptions/listen stream, tagged with that subscription's id
        (2026-07-28 basic "_meta": the server MUST include it on every such notification)."""
        caps.outbound_rule(method, self.role, True, self.capabilities, {}, modern=True)
        meta = {SUBSCRIPTION_ID: subscription_id}
        return rpc.notification_message(method, {**(params or {}), "_meta": meta})

    def _outbound_rule(self, method: str, notification: bool) -> caps.Rule:
        own, peer = self.capabilities, self._peer_capabilities()
        return caps.outbound_rule(method, self.role, notification, own, peer, self.modern is not None)

    def _peer_capabilities(self) -> JSON:
        n = self.negotiated
        if n is None:
            return {}
        return n.server_capabilities if self.role is Role.CLIENT else n.client_capabilities

    def _peer_declares(self, path: tuple[str, ...]) -> bool:
        return caps.declares(self._peer_capabilities(), path)

    def respond(self, rid: RequestId, result: JSON) -> JSON | None:
        """The result message for inbound request `rid`, or None if the peer cancelled it.

        A stateless request's result gets `resultType` and the server's identity in `_meta`.
        """
        state = self._inbound.pop(rid, None)
        if state is None or state.cancelled:
            return None
        if state.negotiated is not None:
            info = self.info if self.server_info_in_results else None
            try:
                result = finish_result(state.method, result, info)
            except ValueError as exc:
                return rpc.error_message(rid, to_wire_error(LocalError(str(exc), INTERNAL_ERROR)))
        return rpc.result_message(rid, result)

    def negotiated_for(self, rid: RequestId) -> Negotiated | None:
        """The agreement inbound request `rid` is served under: its own (stateless) or the session's."""
        state = self._inbound.get(rid)
        if state is not None and state.negotiated is not None:
            return state.negotiated
        return self.negotiated

    def respond_error(self, rid: RequestId, exc: BaseException) -> JSON | None:
        state = self._inbound.pop(rid, None)
        if state is None or state.cancelled:
            return None
        error = to_wire_error(exc)
        # 2026-07-28 basic "Error Codes": -32002 MUST NOT be emitted; resource not found is -32602.
        # Changed here, whoever raised it (a resources/read, or a tool reading a resource).
        version = state.negotiated.version if state.negotiated is not None else None
        if (
            error["code"] == RESOURCE_NOT_FOUND
            and version
            and not has(version, Feature.RESOURCE_NOT_FOUND_CODE)
        ):
            error = {**error, "code": INVALID_PARAMS}
        return rpc.error_message(rid, error)

    def cancel(self, rid: RequestId, reason: str | None = None) -> JSON | None:
        """Stop waiting for our request `rid`; the notification to send, or None if it already finished."""
        method = self._outbound.pop(rid, None)
        if method is None:
            return None
        self._forget_progress(rid)
        if method == "initialize":
            return None  # lifecycle: the initialize request MUST NOT be cancelled
        return rpc.notification_message("notifications/cancelled", cancel_params(rid, reason))

    def progress(
        self, rid: RequestId, progress: float, total: float | None = None, message: str | None = None
    ) -> JSON | None:
        """A progress notification for inbound request `rid`, or None if the peer asked for none.

        utilities "Progress": the value MUST increase with each notification, and notifications
        stop once the request has completed.
        """
        state = self._inbound.get(rid)
        if state is None or state.progress_token is None or state.cancelled:
            return None
        if state.last_progress is not None and progress <= state.last_progress:
            raise LocalError(f"progress must increase: {progress} after {state.last_progress}")
        state.last_progress = progress
        params = progress_params(state.progress_token, progress, total, message)
        return rpc.notification_message("notifications/progress", params)

    def log(
        self, level: str, data: Any, logger: str | None = None, rid: RequestId | None = None
    ) -> JSON | None:
        """A notifications/message, or None when the client's level filters it out.

        For a stateless request the level is that request's `_meta` logLevel, and without one
        nothing is sent (2026-07-28 changelog: servers MUST NOT log for such requests).
        """
        state = self._inbound.get(rid) if rid is not None else None
        if state is not None and state.negotiated is not None:
            if state.log_level is None:
                return None
            params = log_params(level, data, logger, state.log_level)
            return None if params is None else rpc.notification_message("notifications/message", params)
        params = log_params(level, data, logger, self.log_level)
        return None if params is None else self.send_notification("notifications/message", params)

    def is_cancelled(self, rid: RequestId) -> bool:
        state = self._inbound.get(rid)
        return state is not None and state.cancelled

    def _forget_progress(self, rid: RequestId) -> None:
        token = self._token_of.pop(rid, None)
        if token is not None:
            self._progress_of.pop(token, None)


def _progress_token(params: JSON) -> str | int | None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) else None
