"""One bounded cache shared by every server of a group (and by several groups, if given to each).

A Client keys its cache by the server's name, which two configured servers may share (the same program
twice with other arguments). Each server of a group therefore sees the shared cache through a window that
keys by the server's endpoint instead: what it stores is found again after a reconnect and by another
group's client of the same endpoint, and a change notification drops only that endpoint's entries.
Only results the server marked `cacheScope: public` reach it (the Client keeps private ones to itself).
"""

from __future__ import annotations

import shlex

from ...protocol.jsonrpc import JSON
from ..result_cache import ResultCache
from .config import HttpServer, ServerSpec

__all__ = ["ScopedCache"]

Key = tuple[str, str, bytes]


def endpoint(spec: ServerSpec) -> str:
    """What identifies a configured server across groups: its URL, or its command line and directory."""
    if isinstance(spec, HttpServer):
        return "http " + spec.url
    return f"stdio {shlex.join(spec.argv)} in {spec.cwd or '.'}"


class ScopedCache(ResultCache):
    """`shared`, seen by one endpoint: the same get/put/invalidate, on that endpoint's entries only."""

    def __init__(self, shared: ResultCache, scope: str) -> None:
        super().__init__(max_entries=0)
        self.shared, self.scope = shared, scope

    def __len__(self) -> int:
        return len(self.shared)

    def _key(self, key: Key) -> Key:
        return (self.scope, key[1], key[2])  # the endpoint in place of the server's own name

    def get(self, key: Key) -> JSON | None:
        return self.shared.get(self._key(key))

    def put(self, key: Key, result: JSON) -> None:
        self.shared.put(self._key(key), result)

    def invalidate(self, notification: str, params: JSON | None = None, scope: str | None = None) -> None:
        self.shared.invalidate(notification, params, scope=self.scope)
