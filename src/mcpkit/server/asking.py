"""How a handler asks the client, chosen once per request from the era it is served in.

Handshake era: a request on the session, several at once when asked together. 2026-07-28: there is
no channel back, so an ask is answered from the retry's inputResponses or ends the attempt with
input_required (round_trip.py); a request that may not answer input_required cannot ask at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

import anyio

from ..protocol.jsonrpc import JSON, RequestId
from ..protocol.lifecycle import Negotiated
from ..protocol.methods import ASKS_CLIENT
from .round_trip import CannotAsk, RoundTrip

if TYPE_CHECKING:
    from ..runtime.session import Session
    from .request_state import StateSealer

__all__ = ["Asker", "SessionAsker", "asker_for"]

_NONE: Mapping[str, JSON] = MappingProxyType({})


class Asker(Protocol):
    """What a Context asks the client through. `answers`: what the client already answered for this
    attempt of the request (a 2026-07-28 retry's input responses, by key; empty over a session)."""

    @property
    def answers(self) -> Mapping[str, JSON]: ...

    async def ask(self, method: str, params: JSON, key: str | None = None) -> JSON:
        """The client's result for one request; `key` names it in a stateless round trip."""
        ...

    async def ask_many(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        """key -> {"method", "params"} in, key -> the client's result out."""
        ...


class SessionAsker:
    """Asks over the session the request arrived on, related to that request."""

    __slots__ = ("request_id", "session", "timeout")

    def __init__(self, session: Session, request_id: RequestId, timeout: float | None) -> None:
        self.session = session
        self.request_id = request_id
        self.timeout = timeout

    @property
    def answers(self) -> Mapping[str, JSON]:
        return _NONE  # a session's client answers each request as it is asked

    async def ask(self, method: str, params: JSON, key: str | None = None) -> JSON:
        return await self.session.request(method, params, timeout=self.timeout, related=self.request_id)

    async def ask_many(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        answers: dict[str, JSON] = {}

        async def one(key: str, request: JSON) -> None:
            answers[key] = await self.ask(request["method"], request.get("params") or {})

        async with anyio.create_task_group() as tg:
            for key, request in requests.items():
                tg.start_soon(one, key, request)
        return answers


def asker_for(
    session: Session,
    request_id: RequestId,
    method: str,
    params: JSON,
    agreement: Negotiated,
    *,
    sealer: StateSealer,
    timeout: float | None,
    principal: str | None = None,
) -> SessionAsker | RoundTrip | CannotAsk:
    """The asker for one request; a malformed requestState or inputResponses is -32602 here."""
    if not agreement.stateless:
        return SessionAsker(session, request_id, timeout)
    client = agreement.client_capabilities
    if method in ASKS_CLIENT:
        return RoundTrip.from_params(params, sealer, method, client, principal)
    return CannotAsk(client)
