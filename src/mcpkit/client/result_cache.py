"""A client-side cache honouring the hints on stateless results (2026-07-28 server utilities "Caching").

A result is kept for its `ttlMs`. A "private" result is only ever reused by the client that fetched
it (one authorization context); a "public" one may also go into a cache shared by several clients.
Change notifications drop what they make stale.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

import orjson

from ..protocol.jsonrpc import JSON

__all__ = ["ClientCaches", "ResultCache", "cache_key"]

_STALE_AFTER = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


Key = tuple[str, str, bytes]


def cache_key(scope: str, method: str, params: JSON | None) -> Key:
    body = {k: v for k, v in (params or {}).items() if k != "_meta"}
    return (scope, method, orjson.dumps(body, option=orjson.OPT_SORT_KEYS))


class ResultCache:
    """Results by (server, method, params), each until its ttlMs runs out; bounded in entries and, with
    `max_bytes`, in the JSON size of what it holds (the least recently used go first)."""

    def __init__(
        self,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_bytes: int | None = None,
    ) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str, bytes], tuple[float, JSON, int]] = OrderedDict()
        self.size = 0  # bytes held, counted when max_bytes is set

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[str, str, bytes]) -> JSON | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self._clock() >= entry[0]:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: tuple[str, str, bytes], result: JSON) -> None:
        ttl = result.get("ttlMs")
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0:
            return
        size = len(orjson.dumps(result)) if self.max_bytes is not None else 0
        if self.max_bytes is not None and size > self.max_bytes:
            return
        if key in self._entries:
            self._drop(key)
        self._entries[key] = (self._clock() + ttl / 1000, result, size)
        self.size += size
        while len(self._entries) > self.max_entries or (
            self.max_bytes is not None and self.size > self.max_bytes
        ):
            self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple[str, str, bytes]) -> None:
        self.size -= self._entries.pop(key)[2]

    def invalidate(self, notification: str, params: JSON | None = None, scope: str | None = None) -> None:
        """Drop the entries a change notification makes stale (only `scope`'s, when given)."""
        mine = [k for k in self._entries if scope is None or k[0] == scope]
        if notification == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            stale = [k for k in mine if k[1] == "resources/read" and orjson.loads(k[2]).get("uri") == uri]
        else:
            methods = _STALE_AFTER.get(notification, ())
            stale = [k for k in mine if k[1] in methods]
        for key in stale:
            self._drop(key)


class ClientCaches:
    """A client's own cache and, when given, one it shares with other clients: a result is looked for
    in its own first; only a "public" result may go into the shared one (server utilities "Caching")."""

    def __init__(self, own: ResultCache | None, shared: ResultCache | None = None) -> None:
        self.own = own
        self.shared = shared

    def get(self, key: Key) -> JSON | None:
        found = self.own.get(key) if self.own is not None else None
        if found is None and self.shared is not None:
            found = self.shared.get(key)
        return found

    def put(self, key: Key, result: JSON) -> None:
        if self.own is not None:
            self.own.put(key, result)
        if self.shared is not None and result.get("cacheScope") == "public":
            self.shared.put(key, result)

    def invalidate(self, notification: str, params: JSON | None) -> None:
        """Drop, in both, what a change notification makes stale."""
        for cache in (self.own, self.shared):
            if cache is not None:
                cache.invalidate(notification, params)
