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

from ..protocol import capabilities as caps
from ..protocol.errors import InvalidParams, LocalError
from ..protocol.jsonrpc import JSON
from ..protocol.stateless import missing_capability
from .request_state import StateSealer, request_binding

__all__ = ["CannotAsk", "InputRequired", "RoundTrip", "require"]

_SHORT = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


class InputRequired(Exception):
    """Raised by an ask that has no answer yet; the server turns it into an input-required result."""

    def __init__(self, requests: dict[str, JSON], answers: dict[str, JSON]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests
        self.answers = answers


def require(method: str, params: JSON, client: JSON) -> None:
    """2026-07-28 basic "_meta": needing an undeclared client capability is -32021."""
    rule = caps.METHODS[method]
    finer = caps.param_capability(method, params, client)
    for path in (rule.capability, finer):
        if path and not caps.declares(client, path):
            raise missing_capability(path)


class CannotAsk:
    """The asker of a stateless request that may not answer input_required."""

    def __init__(self, client: JSON) -> None:
        self.client = client
        self.answers: dict[str, JSON] = {}  # nothing can have been asked

    async def ask(self, method: str, params: JSON, key: str | None = None) -> JSON:
        raise self._refusal()

    async def ask_many(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        for request in requests.values():
            require(request["method"], request.get("params") or {}, self.client)
        raise self._refusal()

    @staticmethod
    def _refusal() -> LocalError:
        return LocalError(
            "this request cannot ask the client: in 2026-07-28 only tools/call, prompts/get and "
            "resources/read may answer input_required"
        )


class RoundTrip:
    """The answers one attempt of a request can draw on: sealed earlier ones plus this retry's.

    As the asker of a stateless request, an ask with no answer yet raises InputRequired.
    """

    def __init__(
        self,
        answers: dict[str, JSON],
        method: str,
        params: JSON,
        client: JSON,
        sealer: StateSealer,
        principal: str | None = None,
    ) -> None:
        self.answers = answers
        self.client = client  # the capabilities the request declared
        self._method = method
        self._params = params
        self._sealer = sealer
        self._principal = principal  # whose token the state is sealed for (None: no authorization)
        self._counts: dict[str, int] = {}
        self._used: set[str] = set()

    @classmethod
    def from_params(
        cls, params: JSON, sealer: StateSealer, method: str, client: JSON, principal: str | None = None
    ) -> RoundTrip:
        """Open the requestState (if any) and merge in `inputResponses`; -32602 for malformed ones,
        and for state sealed for another principal.

        The request's binding digest is computed only when state is opened or sealed, so a call
        that never asks the client costs nothing here.
        """
        trip = cls({}, method, params, client, sealer, principal)
        if "requestState" in params:
            earlier = sealer.open(params["requestState"], trip.binding()).get("answers")
            if isinstance(earlier, dict):
                trip.answers.update(earlier)
        responses = params.get("inputResponses")
        if responses is not None:
            if not isinstance(responses, dict):
                raise InvalidParams("Invalid params: inputResponses must be an object")
            # A value that is not a result object is ignored: that ask is simply asked again.
            trip.answers.update((k, v) for k, v in responses.items() if isinstance(v, dict))
        return trip

    def binding(self) -> str:
        return request_binding(self._method, self._params, self._principal)

    def key_for(self, method: str, key: str | None) -> str:
        """The key of the next ask: the caller's, or one counted per kind (stable across rounds)."""
        if key is not None:
            return key
        short = _SHORT.get(method, method)
        n = self._counts[short] = self._counts.get(short, 0) + 1
        return f"{short}-{n}"

    async def ask(self, method: str, params: JSON, key: str | None = None) -> JSON:
        answers = await self.ask_many({self.key_for(method, key): {"method": method, "params": params}})
        return next(iter(answers.values()))

    async def ask_many(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        for request in requests.values():
            require(request["method"], request.get("params") or {}, self.client)
        return self.answers_for(requests)

    def answers_for(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        """The answers to `requests` (key -> {method, params}); InputRequired for the missing ones."""
        missing = {k: r for k, r in requests.items() if k not in self.answers}
        self._used.update(k for k in requests if k in self.answers)
        if missing:
            # Only answers the handler has drawn on are carried forward; unknown extras are dropped.
            raise InputRequired(missing, {k: self.answers[k] for k in sorted(self._used)})
        return {k: self.answers[k] for k in requests}

    def result(self, need: InputRequired) -> JSON:
        """The InputRequiredResult; only answers this request asked for are carried forward."""
        state = self._sealer.seal({"answers": need.answers}, self.binding())
        return {"resultType": "input_required", "inputRequests": need.requests, "requestState": state}
