"""Asking the client inside a stateless (2026-07-28) request: the multi round-trip pattern.

A handler calls `ctx.elicit(...)`, `ctx.sample(...)` or `ctx.list_roots()` the same way in both
eras. On a stateless request there is no channel back to the client, so the first ask that has no
answer yet ends the attempt with an input-required result; the client retries with the answers and
the handler runs again from the top, this time getting each earlier answer back at once. Answers
from earlier rounds ride along in the sealed requestState, so no server keeps anything between
rounds. A handler must therefore ask in the same order on every run, and work done before an ask
is repeated on each round.

Spec: patterns "Multi Round-Trip Requests".
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import INVALID_PARAMS, MCPError
from .request_state import StateSealer, request_binding

__all__ = ["InputRequired", "RoundTrip"]

JSON = dict[str, Any]

_SHORT = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


class InputRequired(Exception):
    """Raised by an ask that has no answer yet; the server turns it into an input-required result."""

    def __init__(self, requests: dict[str, JSON], answers: dict[str, JSON]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests
        self.answers = answers


class RoundTrip:
    """The answers one attempt of a request can draw on: sealed earlier ones plus this retry's."""

    def __init__(self, answers: dict[str, JSON], method: str, params: JSON) -> None:
        self.answers = answers
        self._method, self._params = method, params
        self._counts: dict[str, int] = {}
        self._used: set[str] = set()

    @classmethod
    def from_params(cls, params: JSON, sealer: StateSealer, method: str) -> RoundTrip:
        """Open the requestState (if any) and merge in `inputResponses`; -32602 for malformed ones.

        The request's binding digest is computed only when state is opened or sealed, so a call
        that never asks the client costs nothing here.
        """
        trip = cls({}, method, params)
        if "requestState" in params:
            earlier = sealer.open(params["requestState"], trip.binding()).get("answers")
            if isinstance(earlier, dict):
                trip.answers.update(earlier)
        responses = params.get("inputResponses")
        if responses is not None:
            if not isinstance(responses, dict):
                raise MCPError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
            # A value that is not a result object is ignored: that ask is simply asked again.
            trip.answers.update((k, v) for k, v in responses.items() if isinstance(v, dict))
        return trip

    def binding(self) -> str:
        return request_binding(self._method, self._params)

    def key_for(self, method: str, key: str | None) -> str:
        """The key of the next ask: the caller's, or one counted per kind (stable across rounds)."""
        if key is not None:
            return key
        short = _SHORT.get(method, method)
        n = self._counts[short] = self._counts.get(short, 0) + 1
        return f"{short}-{n}"

    def ask(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        """The answers to `requests` (key -> {method, params}); InputRequired for the missing ones."""
        missing = {k: r for k, r in requests.items() if k not in self.answers}
        self._used.update(k for k in requests if k in self.answers)
        if missing:
            # Only answers the handler has drawn on are carried forward; unknown extras are dropped.
            raise InputRequired(missing, {k: self.answers[k] for k in sorted(self._used)})
        return {k: self.answers[k] for k in requests}

    def result(self, need: InputRequired, sealer: StateSealer) -> JSON:
        """The InputRequiredResult; only answers this request asked for are carried forward."""
        state = sealer.seal({"answers": need.answers}, self.binding())
        return {"resultType": "input_required", "inputRequests": need.requests, "requestState": state}
