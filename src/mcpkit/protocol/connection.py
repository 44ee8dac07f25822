"""The sans-I/O MCP connection: messages in, events out; calls in, messages out. No I/O, no clock.

A façade over tables: the lifecycle (`lifecycle.TRANSITIONS`), who may send what (`capabilities.METHODS`),
what the core answers itself (its `_CORE_*` tables) and the ids in flight in each direction (`Correlation`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from . import capabilities as caps
from . import events as ev
from . import jsonrpc as rpc
from . import lifecycle, stateless
from .capabilities import Owner, Role
from .correlation import Correlation
from .errors import LocalError, RemoteError, to_wire_error
from .jsonrpc import JSON, ErrorResponse, InvalidMessage, Notification, Request, RequestId
from .lifecycle import ON_RECEIVE, ON_SEND_NOTIFICATION, ON_SEND_REQUEST, Negotiated, Phase, Trigger, advance
from .utilities import cancel_params, log_params, read_level
from .versions import LATEST, SUPPORTED_VERSIONS, negotiate

__all__ = ["Connection"]

Outcome = JSON | RemoteError  # what came back for one of our requests


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
        request_ids: Iterator[RequestId] | None = None,
    ) -> None:
        self.role = role
        self.info = info
        self.capabilities = capabilities
        self.instructions = instructions
        self.versions, self.max_depth = versions, max_depth
        self.phase = Phase.NEW
        self.negotiated: Negotiated | None = None  # the handshake's agreement, or the one a client adopted
        self.log_level: str | None = None  # server: set by logging/setLevel; client: sent in `_meta`
        self.server_info_in_results = True  # 2026-07-28 basic "_meta": SHOULD, unless configured not to
        self.calls = Correlation(request_ids)  # ids: a sequence a transport shares across connections
        # Methods a READY connection has let in, each READY -> READY: derived from the tables on
        # first use, so the next such request skips the lookups (nothing here changes while READY).
        self._ready_methods: set[str] = set()
        self.extension_rules: dict[str, caps.MethodSpec] = {}  # the extension methods known (extensions.py)

    def _advance(self, trigger: Trigger, subject: str) -> None:
        self.phase = advance(self.role, self.phase, trigger, subject)

    @property
    def _stateless(self) -> bool:
        """A client that adopted a 2026-07-28 agreement (a server's agreements are per request)."""
        return self.negotiated is not None and self.negotiated.stateless

    # ---- inbound ---------------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | str) -> list[ev.Event]:
        """Decode one framed message and receive it; undecodable input becomes an error reply."""
        try:
            obj = rpc.decode(data, self.max_depth)
        except InvalidMessage as exc:
            return [ev.SendMessage(rpc.error_message(None, exc.to_wire()))]
        return self.receive(obj)

    def receive(self, obj: Any) -> list[ev.Event]:
        """The events one decoded message makes; a bad request is answered, a bad response never is."""
        try:
            message = rpc.classify(obj)
        except InvalidMessage as exc:
            if exc.response:  # it names a request of ours: that request fails at once
                return self._settle(exc.request_id, exc)
            return [ev.SendMessage(rpc.error_message(exc.request_id, exc.to_wire()))]
        if isinstance(message, Request):
            try:
                return self._receive_request(message)
            except RemoteError as exc:
                return [ev.SendMessage(rpc.error_message(message.id, exc.to_wire()))]
        if isinstance(message, Notification):
            return self._receive_notification(message)
        if isinstance(message, ErrorResponse):
            return self._settle(message.id, RemoteError.from_wire(message.error))
        return self._settle(message.id, message.result)

    def _receive_request(self, request: Request) -> list[ev.Event]:
        rid, method, params = request.id, request.method, request.params
        agreed = self.negotiated
        if (
            method in self._ready_methods
            and self.phase is Phase.READY
            and ("_meta" not in params or not stateless.is_stateless_request(params))
        ):
            assert agreed is not None
            self.calls.received(rid, method, params, agreed, None)
            return [ev.RequestReceived(rid, method, params, agreed)]
        if stateless.served_statelessly(self.role, self.versions, method, params, self.phase is Phase.NEW):
            own, level = stateless.accept_stateless(
                method,
                params,
                self.versions,
                self.info,
                self.capabilities,
                self.instructions,
                self.extension_rules,
            )
            self.calls.received(rid, method, params, own, level)
            return [ev.RequestReceived(rid, method, params, own)]
        mine, rules = self.capabilities, self.extension_rules
        rule = caps.inbound_rule(method, self.role, False, mine, self._stateless, rules)
        before, self.phase = self.phase, advance(self.role, self.phase, ON_RECEIVE[rule.before_ready], method)
        core = self.CORE_REQUESTS.get(method)
        if core is not None:
            self.calls.expect_new(rid)
            return core(self, rid, params)
        if before is Phase.READY is self.phase:
            self._ready_methods.add(method)
        assert agreed is not None  # the core answers every request the lifecycle lets in early
        self.calls.received(rid, method, params, agreed, None)
        return [ev.RequestReceived(rid, method, params, agreed)]

    def _receive_notification(self, note: Notification) -> list[ev.Event]:
        method, params = note.method, note.params
        try:
            rule = caps.inbound_rule(method, self.role, True, self.capabilities, self._stateless)
        except RemoteError:
            return []  # a notification cannot be answered; an unknown one is ignored
        if rule.capability and rule.owner is Owner.SENDER and not self._peer_declares(rule.capability):
            return []  # the peer did not declare it may send this
        core = self.CORE_NOTIFICATIONS.get(method)
        return core(self, params) if core is not None else [ev.NotificationReceived(method, params)]

    def _settle(self, rid: RequestId | None, outcome: JSON | RemoteError | InvalidMessage) -> list[ev.Event]:
        """The answer to our request `rid` arrived; a late answer, or one to an unknown id, is ignored."""
        method = self.calls.close(rid)
        if method is None or rid is None:
            return []
        if isinstance(outcome, InvalidMessage):
            peer, why = self.role.peer.value, outcome.message
            outcome = RemoteError(outcome.code, f"The {peer} sent a malformed response to {method!r}: {why}")
        core = self.CORE_RESULTS.get(method)
        if core is not None:
            return core(self, rid, outcome)
        if isinstance(outcome, RemoteError):
            return [ev.ErrorReceived(rid, outcome)]
        return [ev.ResponseReceived(rid, outcome)]

    # ---- what the core answers or consumes itself (lifecycle "Initialization", utilities "Ping",
    # server utilities "Logging", utilities "Cancellation" and "Progress"); the rest is an event ----

    def _accept_initialize(self, rid: RequestId, params: JSON) -> list[ev.Event]:
        self._advance(Trigger.RECEIVE_INITIALIZE, "initialize")
        own = self.versions, self.info, self.capabilities, self.instructions
        self.negotiated, result = lifecycle.accept_initialize(params, *own)
        return [ev.SendMessage(rpc.result_message(rid, result)), ev.Ready(self.negotiated)]

    def _pong(self, rid: RequestId, params: JSON) -> list[ev.Event]:
        return [ev.SendMessage(rpc.result_message(rid, {}))]

    def _set_level(self, rid: RequestId, params: JSON) -> list[ev.Event]:
        self.log_level = read_level(params)
        return [ev.SendMessage(rpc.result_message(rid, {}))]

    def _initialized(self, rid: RequestId, outcome: JSON | RemoteError) -> list[ev.Event]:
        """The client's side: the initialize result (or error) ends the handshake either way."""
        try:
            if isinstance(outcome, RemoteError):
                raise outcome
            negotiated = lifecycle.check_initialize_result(
                outcome, self.info, self.capabilities, self.versions
            )
        except RemoteError as exc:
            self._advance(Trigger.INITIALIZE_FAILED, "initialize")
            return [ev.ErrorReceived(rid, exc)]
        self._advance(Trigger.INITIALIZE_RESULT, "initialize")
        self.negotiated = negotiated
        done = ev.SendMessage(rpc.notification_message("notifications/initialized", None))
        return [ev.ResponseReceived(rid, outcome), done, ev.Ready(negotiated)]

    def _progressed(self, params: JSON) -> list[ev.Event]:
        return list(self.calls.progressed(params))

    def _cancelled(self, params: JSON) -> list[ev.Event]:
        return list(self.calls.peer_cancelled(params))

    # Requests the core answers: method -> handler(connection, id, params).
    CORE_REQUESTS: ClassVar[dict[str, Callable[[Connection, RequestId, JSON], list[ev.Event]]]] = {
        "initialize": _accept_initialize,
        "ping": _pong,
        "logging/setLevel": _set_level,
    }
    # Notifications the core consumes: method -> handler(connection, params).
    CORE_NOTIFICATIONS: ClassVar[dict[str, Callable[[Connection, JSON], list[ev.Event]]]] = {
        "notifications/progress": _progressed,
        "notifications/cancelled": _cancelled,
    }
    # Answers to our own requests that the core consumes: method -> handler(connection, id, outcome).
    CORE_RESULTS: ClassVar[
        dict[str, Callable[[Connection, RequestId, JSON | RemoteError], list[ev.Event]]]
    ] = {
        "initialize": _initialized,
    }

    # ---- outbound --------------------------------------------------------------------------

    def initialize(self, version: str = LATEST) -> tuple[RequestId, JSON]:
        """The client's first message."""
        self._advance(Trigger.SEND_INITIALIZE, "initialize")
        params = lifecycle.initialize_params(version, self.capabilities, self.info)
        rid, params = self.calls.open("initialize", params)
        return rid, rpc.request_message(rid, "initialize", params)

    def assume(
        self,
        version: str,
        client_capabilities: JSON | None = None,
        client_info: JSON | None = None,
        *,
        log_level: str | None = None,
    ) -> None:
        """The server's side, when its transport serves a handshake-era message without a handshake on
        this connection: a server keeping no HTTP sessions (the client declared nothing), or one
        restoring a session another process initialized (what that client declared, and the log level
        it set). `version` is negotiated as initialize would be."""
        self._advance(Trigger.ASSUME_VERSION, "a pre-agreed version")
        agreed = negotiate(version, self.versions)
        caps, info = client_capabilities or {}, client_info or {}
        self.negotiated = Negotiated(agreed, info, caps, self.info, self.capabilities, self.instructions)
        self.log_level = log_level

    def adopt_stateless(self, negotiated: Negotiated) -> list[ev.Event]:
        """The client's side: speak the stateless era from now on (after server/discover, or pinned)."""
        if not negotiated.stateless:
            raise LocalError(f"{negotiated.version} is not a 2026-07-28 version to adopt")
        self._advance(Trigger.ADOPT_STATELESS, "server/discover")
        self.negotiated = negotiated
        return [ev.Ready(negotiated)]

    def send_request(
        self, method: str, params: JSON | None = None, *, progress: bool = False
    ) -> tuple[RequestId, JSON]:
        """Build an outbound request; raise CapabilityError if the peer did not declare what it needs.

        `progress`: give it a progress token (if it has none), so the peer's progress is reported."""
        params = params or {}
        rule = self._outbound_rule(method, False, params)
        self._advance(ON_SEND_REQUEST[rule.before_ready], method)
        if self.negotiated is not None and self.negotiated.stateless:
            params = self._with_request_meta(params, self.negotiated.version)
        rid, params = self.calls.open(method, params, progress)
        return rid, rpc.request_message(rid, method, params)

    def stateless_request(
        self, method: str, version: str, params: JSON | None = None
    ) -> tuple[RequestId, JSON]:
        """The client's side: a stateless request sent before any agreement (server/discover, a probe)."""
        self._advance(Trigger.SEND_PROBE, method)
        rid, params = self.calls.open(method, self._with_request_meta(params or {}, version))
        return rid, rpc.request_message(rid, method, params)

    def _with_request_meta(self, params: JSON, version: str) -> JSON:
        return stateless.with_request_meta(params, version, self.capabilities, self.info, self.log_level)

    def send_notification(self, method: str, params: JSON | None = None) -> JSON:
        rule = self._outbound_rule(method, True)
        self._advance(ON_SEND_NOTIFICATION[rule.before_ready], method)
        return rpc.notification_message(method, params)

    def subscription_notification(self, method: str, params: JSON | None, subscription_id: RequestId) -> JSON:
        """A notification on the subscriptions/listen stream `subscription_id` (tagged with it)."""
        return stateless.subscription_notification(method, params, subscription_id, self.capabilities)

    def _outbound_rule(self, method: str, notification: bool, params: JSON | None = None) -> caps.MethodSpec:
        own, peer = self.capabilities, self._peer_capabilities()
        stateless, rules = self._stateless, self.extension_rules
        return caps.outbound_rule(method, self.role, notification, own, peer, stateless, params, rules)

    def _peer_capabilities(self) -> JSON:
        return {} if self.negotiated is None else self.negotiated.capabilities_of(self.role.peer)

    def _peer_declares(self, path: tuple[str, ...]) -> bool:
        return caps.declares(self._peer_capabilities(), path)

    def respond(self, rid: RequestId, result: JSON) -> JSON | None:
        """The result message for inbound request `rid` (a stateless one's with `resultType` and the
        server's identity in `_meta`), or None if the peer cancelled it."""
        state = self.calls.finish(rid)
        if state is None:
            return None
        if state.negotiated.stateless:
            try:
                info = self.info if self.server_info_in_results else None
                result = stateless.finish_result(state.method, result, info)
            except LocalError as exc:
                return rpc.error_message(rid, to_wire_error(exc))
        return rpc.result_message(rid, result)

    def respond_error(self, rid: RequestId, exc: BaseException) -> JSON | None:
        """The error for inbound request `rid`, in the codes of its version; None if it was cancelled."""
        state = self.calls.finish(rid)
        if state is None:
            return None
        return rpc.error_message(rid, to_wire_error(exc, state.negotiated.version))

    def cancel(self, rid: RequestId, reason: str | None = None) -> JSON | None:
        """Stop waiting for our request `rid`; the notification to send, or None if it already finished."""
        method = self.calls.close(rid)
        if method is None:
            return None
        if method == "initialize":
            self._advance(Trigger.ABANDON_INITIALIZE, method)
            return None  # lifecycle: the initialize request MUST NOT be cancelled
        return rpc.notification_message("notifications/cancelled", cancel_params(rid, reason))

    def progress(
        self, rid: RequestId, progress: float, total: float | None = None, message: str | None = None
    ) -> JSON | None:
        """A progress notification for inbound request `rid`, or None if the peer asked for none or it
        has completed; LocalError unless `progress` increases (utilities "Progress")."""
        params = self.calls.progress(rid, progress, total, message)
        return None if params is None else rpc.notification_message("notifications/progress", params)

    def log(
        self, level: str, data: Any, logger: str | None = None, rid: RequestId | None = None
    ) -> JSON | None:
        """A notifications/message, or None when the client's level filters it out. For a stateless
        request that is its `_meta` logLevel, and without one nothing is sent (2026-07-28 changelog)."""
        state = self.calls.owed(rid)
        if state is None or not state.negotiated.stateless:
            params = log_params(level, data, logger, self.log_level)
            return None if params is None else self.send_notification("notifications/message", params)
        params = log_params(level, data, logger, state.log_level) if state.log_level else None
        return None if params is None else rpc.notification_message("notifications/message", params)

    def is_cancelled(self, rid: RequestId) -> bool:
        return self.calls.is_cancelled(rid)
