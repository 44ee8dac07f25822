"""A remote call kept open across a 2026-07-28 client's input-required rounds.

A stateless client cannot be sent a request; it is answered `input_required` and retries with the
answers (patterns "Multi Round-Trip Requests"). The remote, of either era, asks in the middle of one
call that must not be run again. So the proxy parks the remote call in this process: each round waits
until the remote either answers (the round's result) or asks (the round ends input-required, the ask's
key naming the parked call); the retry hands the answer to the waiting remote request and waits again.

The key (`proxy-<random id>-<n>`) is what finds the call again; the retry must repeat the first
request's params. A client that does not come back within `timeout` abandons the call: the remote's
request fails and its call is cancelled. Parked calls live in one process: a proxy of several
replicas needs its rounds routed to the replica that holds the call.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio

from ..protocol.errors import INTERNAL_ERROR, InvalidParams, MCPError
from ..protocol.jsonrpc import JSON
from ..server.context import Context
from ..server.round_trip import InputRequired

__all__ = ["KEY_PREFIX", "Parked", "parked_id"]

log = logging.getLogger("mcpkit")
KEY_PREFIX: Final = "proxy-"
_ASKS_BUFFERED: Final = 16


def parked_id(answers: Mapping[str, JSON]) -> str | None:
    """The parked call a retry's answers are for, from their keys."""
    for key in answers:
        if key.startswith(KEY_PREFIX):
            return key[len(KEY_PREFIX) :].rpartition("-")[0]
    return None


class _Slot:
    """Where one ask of the remote waits for the client's answer."""

    def __init__(self) -> None:
        self.ready = anyio.Event()
        self.answer: JSON | MCPError = InvalidParams("not answered")

    def give(self, answer: JSON | MCPError) -> None:
        self.answer = answer
        self.ready.set()


class Parked:
    """One remote call and its asks; `ask` runs in the remote's handler, `round` in each front attempt."""

    def __init__(
        self, method: str, params: JSON, *, timeout: float | None, on_end: Callable[[], None]
    ) -> None:
        self.ident = secrets.token_urlsafe(12)
        self.method = method
        self.params = params
        self.timeout = timeout
        self.ctx: Context | None = None  # the round in flight: where progress goes
        self._events_in, self._events = anyio.create_memory_object_stream[tuple[Any, ...]](_ASKS_BUFFERED)
        self._waiting: dict[str, _Slot] = {}
        self._asked = 0
        self._scope = anyio.CancelScope()
        self._on_end = on_end

    async def run(self, call: Callable[[], Awaitable[JSON]]) -> None:
        """The remote call, to be started in a task that outlives the round (the proxy's)."""
        with self._scope:
            try:
                outcome: JSON | MCPError = await call()
            except MCPError as exc:
                outcome = exc
            except Exception:  # whatever the remote did, the round waiting for it gets an answer
                log.exception("a parked remote call failed")
                outcome = MCPError(INTERNAL_ERROR, "the proxied call failed")
            await self._events_in.send(("done", outcome))

    def end(self) -> None:
        """Cancel the remote call (if still running) and forget it."""
        self._scope.cancel()
        self._on_end()

    async def ask(self, method: str, params: JSON) -> JSON:
        """The remote asks: wait for the client's answer, which comes with its next round."""
        slot = _Slot()
        await self._events_in.send(("ask", method, params, slot))
        with anyio.move_on_after(self.timeout) as waited:
            await slot.ready.wait()
        if waited.cancelled_caught:
            self.end()
            raise InvalidParams(f"{method}: the proxy's client did not answer in time")
        if isinstance(slot.answer, MCPError):
            raise slot.answer
        return slot.answer

    async def round(self, ctx: Context, params: JSON) -> JSON:
        """One attempt of the client's request: hand over its answers, then the result or the next ask."""
        if params != self.params:
            raise InvalidParams("Invalid params: a retry must repeat the request it answers")
        answers = ctx.asker.answers
        for key in [k for k in self._waiting if k in answers]:
            self._waiting.pop(key).give(answers[key])
        self.ctx = ctx
        try:
            return await self._next(ctx)
        except anyio.get_cancelled_exc_class():
            self.end()  # the client gave up on this round: the remote call goes too
            raise

    async def _next(self, ctx: Context) -> JSON:
        while True:
            event = await self._events.receive()
            if event[0] == "done":
                self.end()
                if isinstance(event[1], MCPError):
                    raise event[1]
                result: JSON = event[1]
                return result
            _, method, params, slot = event
            self._asked += 1
            key = f"{KEY_PREFIX}{self.ident}-{self._asked}"
            try:
                await ctx.asker.ask(method, params, key=key)  # raises InputRequired: this key is new
            except InputRequired:
                self._waiting[key] = slot
                raise
            except MCPError as exc:  # the client lacks that capability (-32021): the remote hears it
                slot.give(exc)
