"""Which of the proxy's clients a remote's own request (sampling, elicitation, roots) belongs to.

The remote asks in the middle of one forwarded call, and only the client that made that call may see
the question or answer it: asking another would leak one client's data to another and let it steer a
call that is not its own. What names the call, best first:

- a 2026-07-28 remote asks with an input-required result, which the Client answers in the task of the
  call itself (the flight `flying` set there);
- a handshake-era remote over Streamable HTTP sends its request on the response stream of the call it
  belongs to, and the Client names that request (`asked_in`);
- nothing else does (stdio; the standalone GET stream). While every call in flight is one client's, that
  client is asked (its latest tools/call); with several clients' calls in flight the request is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from ..client.handlers import asked_in
from ..protocol.errors import InvalidRequest
from ..protocol.jsonrpc import RequestId
from ..server.context import Context
from .parked import Parked

__all__ = ["Flight", "Flights"]


@dataclass(eq=False, slots=True)
class Flight:
    """One front request forwarded to the remote: who sent it, and the ids it went out with."""

    method: str
    target: Context | Parked
    remote_ids: list[RequestId] = field(default_factory=list)

    @property
    def owner(self) -> object:
        """Who may answer for it: a handshake-era client's front session; a stateless client's parked
        call stands alone (nothing ties two stateless calls to one client)."""
        return self.target.session if isinstance(self.target, Context) else self.target


_CURRENT: ContextVar[Flight | None] = ContextVar("mcpkit_proxy_flight", default=None)


class Flights:
    """The front requests in flight on the remote, in the order they were sent."""

    def __init__(self) -> None:
        self._flights: dict[Flight, None] = {}  # an ordered set
        self._by_remote_id: dict[RequestId, Flight] = {}

    def start(self, method: str, target: Context | Parked) -> Flight:
        flight = Flight(method, target)
        self._flights[flight] = None
        return flight

    def sent(self, flight: Flight, rid: RequestId) -> None:
        """`flight` went to the remote as request `rid` (a Client's `on_id`)."""
        if flight in self._flights:
            flight.remote_ids.append(rid)
            self._by_remote_id[rid] = flight

    def end(self, flight: Flight) -> None:
        self._flights.pop(flight, None)
        for rid in flight.remote_ids:
            self._by_remote_id.pop(rid, None)

    @contextmanager
    def current(self, flight: Flight) -> Iterator[Flight]:
        """Mark the running task as the one forwarding `flight`."""
        token = _CURRENT.set(flight)
        try:
            yield flight
        finally:
            _CURRENT.reset(token)

    @contextmanager
    def flying(self, method: str, target: Context | Parked) -> Iterator[Flight]:
        """A flight for the duration of the block, current in the running task."""
        flight = self.start(method, target)
        try:
            with self.current(flight):
                yield flight
        finally:
            self.end(flight)

    def asking(self, method: str) -> Flight:
        """The flight a remote's `method` request belongs to; MCPError when no client may be asked."""
        flight = _CURRENT.get()
        if flight is None:
            rid = asked_in()
            flight = self._by_remote_id.get(rid) if rid is not None else None
        return flight if flight is not None else self._sole_owners(method)

    def _sole_owners(self, method: str) -> Flight:
        flights = list(self._flights)
        if not flights:
            raise InvalidRequest(f"{method}: no client request is in flight through the proxy")
        owners = {flight.owner for flight in flights}
        if len(owners) > 1:
            raise InvalidRequest(
                f"{method}: refused: {len(owners)} clients have requests in flight through the proxy and "
                "the remote did not say which request this belongs to",
            )
        calls = [flight for flight in flights if flight.method == "tools/call"]
        return (calls or flights)[-1]
