"""What a cluster worker says when Redis fails it: a 503 with Retry-After while the store is away (logged
once when an outage starts and once when it ends) or its replicas do not confirm a write (`wait_replicas`),
the busy answer when the worker's own connections ran out (not an outage), and the busy answer when a
session has `max_in_flight` requests in flight."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from redis.exceptions import RedisError

from ..protocol.errors import INTERNAL_ERROR, SERVER_BUSY
from ..protocol.http_rules import HTTPRefusal
from ..protocol.jsonrpc import RequestId, encode, error_response
from .durability import NotDurable
from .pool import PoolExhausted
from .state import EventLogFull

__all__ = ["SessionFull", "StoreHealth"]

log = logging.getLogger("mcpkit.cluster")


class StoreHealth:
    def __init__(self) -> None:
        self.down = False  # an outage was logged and has not ended yet

    @contextmanager
    def reachable(self) -> Iterator[None]:
        """Redis failing the block: 503 with Retry-After (429 busy when the pool ran out; 503 with a longer
        Retry-After while the cluster's stored events are over their budget)."""
        try:
            yield
        except EventLogFull:  # the budget logs when it starts and ends
            message = "Service Unavailable: the server's event log is full (max_total_bytes), retry later"
            raise HTTPRefusal(503, message, INTERNAL_ERROR, retry_after="5") from None
        except PoolExhausted as exc:
            raise HTTPRefusal(
                429, f"Server busy: {exc}; retry shortly", SERVER_BUSY, retry_after="1"
            ) from None
        except NotDurable as exc:  # Redis answered; the write stays unacknowledged (docs/scale-out.md)
            self.lost(exc)
            message = f"Service Unavailable: {exc}; retry later"
            data = {"reason": "not_durable"}
            raise HTTPRefusal(503, message, INTERNAL_ERROR, data=data, retry_after="1") from None
        except RedisError as exc:
            self.lost(exc)
            message = "Service Unavailable: the session store (Redis) is unreachable"
            raise HTTPRefusal(503, message, INTERNAL_ERROR, retry_after="1") from None

    def lost(self, exc: RedisError) -> None:
        """Redis failed a step: logged once per outage, which lasts until `ok`."""
        if isinstance(exc, PoolExhausted):  # this worker is busy, Redis is fine
            return
        if not self.down:
            what = (
                "did not confirm a write on enough replicas"
                if isinstance(exc, NotDurable)
                else "is unreachable"
            )
            log.warning("the session store (Redis) %s: %s", what, exc)
        self.down = True

    def ok(self) -> None:
        """A whole exchange went through Redis (one step succeeding is not enough: an outage can fail
        writes and not reads)."""
        if self.down:
            log.warning("the session store (Redis) is reachable again")
            self.down = False


class SessionFull(Exception):
    """A request refused because `cap` requests of its session are in flight across the cluster."""

    def __init__(self, rid: RequestId, cap: int) -> None:
        super().__init__(rid)
        self.rid, self.cap = rid, cap

    def response(self) -> bytes:
        """The request's error, as one process answers it (-32010 with `data.maxInFlight`)."""
        why = f"Server busy: {self.cap} requests of this session are already in flight; retry when one ends"
        return encode(error_response(self.rid, SERVER_BUSY, why, {"maxInFlight": self.cap}))
