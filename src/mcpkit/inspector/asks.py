"""Questions the server asks the inspector's user (elicitation, sampling): shown in the page, answered
there by hand; the server's request waits until the page answers."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import anyio

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import JSON
from .hub import Hub

__all__ = ["USER_REJECTED", "Asks"]

USER_REJECTED = -1  # sampling "Error Handling": the code the spec's example gives a user's rejection


@dataclass
class _Waiting:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: JSON | None = None
    error: str | None = None


class Asks:
    """Open questions by id; `ask` publishes one and waits for `answer`."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.waiting: dict[str, _Waiting] = {}
        self._ids = itertools.count(1)

    async def ask(self, method: str, params: JSON) -> JSON:
        ask_id = f"ask-{next(self._ids)}"
        waiting = self.waiting[ask_id] = _Waiting()
        self.hub.publish("ask", id=ask_id, method=method, params=params)
        outcome = "cancelled"
        try:
            await waiting.done.wait()
            outcome = "answered"
        finally:
            del self.waiting[ask_id]
            self.hub.publish("asked", id=ask_id, outcome=outcome)
        if waiting.error is not None:
            raise MCPError(USER_REJECTED, waiting.error)
        assert waiting.result is not None
        return waiting.result

    def answer(self, ask_id: str, result: JSON | None, error: str | None) -> bool:
        """Give question `ask_id` its answer (a result, or an error text); False if nobody waits for it."""
        waiting = self.waiting.get(ask_id)
        if waiting is None or waiting.done.is_set():
            return False
        waiting.result, waiting.error = result or {}, error
        waiting.done.set()
        return True
