"""Per-principal catalogs: which tools, resources, templates and prompts each caller sees.

`Server(visible=fn)` or `@server.visibility`: `fn(auth, kind, item) -> bool` is asked, per request,
about each item of a list kind ("tools", "resources", "resourceTemplates", "prompts") with the caller's
verified access token (`auth`, None when the request carries none: stdio, an unprotected server).
An item it does not show is absent for that caller everywhere: left out of every list (the list cache
is keyed by the set of items shown, so callers with the same view share pages and no page crosses
views), and answered exactly as an unknown name or URI would be by tools/call, prompts/get,
resources/read, resources/subscribe, completion/complete and subscriptions/listen. Its scopes are
never asked for, so an insufficient_scope refusal cannot tell that it exists either.

Notifications about items go through the same hook, as Peers' `audience`: a session or a
subscriptions/listen stream hears notifications/*/list_changed only when its own view of that list
changed (the items it sees now against those at the previous change), and resources/updated only for
a URI served by an item it sees. A handshake-era session speaks for the token of its latest request;
before its first request after initialize it hears of no item (whose it would be is not known yet).
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from weakref import WeakKeyDictionary

import orjson

from ..protocol.jsonrpc import JSON
from ..protocol.versions import LATEST
from .registry import LIST_CHANGED, Registry, Shows
from .scopes import permits

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken
    from ..runtime.origin import Origin

__all__ = ["Visibility", "VisibleFn"]

Viewer: TypeAlias = "AccessToken | None"
VisibleFn = Callable[["AccessToken | None", str, Any], bool]
Hears = Callable[[object], bool]

_UPDATED: Final = "notifications/resources/updated"
_MAX_SIGNED: Final = 10_000  # items' serialised definitions kept for `views`


def _everyone(_member: object) -> bool:
    return True


class _Unknown:
    """Who a session speaks for before its first request (initialize is the core's: no token seen)."""


_UNKNOWN: Final = _Unknown()


class Visibility:
    """A server's visibility hook, and who (which session or listen stream) speaks for which token."""

    def __init__(self, fn: VisibleFn, registry: Registry) -> None:
        self.fn = fn
        self.registry = registry
        self._viewers: WeakKeyDictionary[object, Viewer] = WeakKeyDictionary()
        self._before = {kind: dict(registry.of(kind)) for kind in LIST_CHANGED}
        self._swap = threading.Lock()  # a sync tool's worker thread may change the registry too
        self._signed: dict[tuple[str, Any], bytes] = {}  # see _signature

    def shows(self, viewer: Viewer) -> Shows:
        """What `viewer` sees: `shows(kind, item) -> bool`."""
        return functools.partial(self.fn, viewer)

    def viewing(self, member: object, origin: Origin | None) -> Shows:
        """Note that `member` (a session) speaks for the token of the message `origin` describes,
        and what that token sees."""
        viewer = origin.auth if origin is not None else None
        self._viewers[member] = viewer
        return self.shows(viewer)

    def seen(self, member: object, viewer: Viewer) -> None:
        """Note that `member` (a subscriptions/listen stream) speaks for `viewer`."""
        self._viewers[member] = viewer

    # ---- the Audience of Peers -----------------------------------------------------------------

    def hearing(self, method: str, params: JSON | None) -> Hears:
        """Who hears one notification: `hears(member)`. Asked once per change notification, whose
        view it compares with the one asked before."""
        kinds = [kind for kind, announced in LIST_CHANGED.items() if announced == method]
        if kinds:
            return self._view_changed(kinds)
        uri = params.get("uri") if params is not None and method == _UPDATED else None
        if isinstance(uri, str):
            return functools.partial(self._sees_uri, uri)
        return _everyone

    def _sees_uri(self, uri: str, member: object) -> bool:
        viewer = self._viewers.get(member, _UNKNOWN)
        return not isinstance(viewer, _Unknown) and self.registry.knows(uri, self.shows(viewer))

    def _view_changed(self, kinds: list[str]) -> Hears:
        with self._swap:
            before = {kind: self._before[kind] for kind in kinds}
            after = {kind: dict(self.registry.of(kind)) for kind in kinds}
            self._before.update(after)
        decided: dict[int, bool] = {}  # by token: the sessions and streams of one caller decide once

        def hears(member: object) -> bool:
            viewer = self._viewers.get(member, _UNKNOWN)
            if isinstance(viewer, _Unknown):
                return False
            if id(viewer) not in decided:
                decided[id(viewer)] = any(
                    self._view(before[k], k, viewer) != self._view(after[k], k, viewer) for k in kinds
                )
            return decided[id(viewer)]

        return hears

    def views(self, viewer: Viewer) -> dict[str, str]:
        """What `viewer` sees of each list, a digest by the list_changed method announcing it: the keys
        and definitions of the items it sees (the same on every worker whose registry holds the same
        items, which an item's identity is not)."""
        granted = viewer.scopes if viewer is not None else None
        digests: dict[str, hashlib.blake2b] = {}
        for kind, method in LIST_CHANGED.items():
            digest = digests.setdefault(method, hashlib.blake2b(digest_size=16))
            for key, item in sorted(list(self.registry.of(kind).items())):
                if permits(item.scopes, granted) and self.fn(viewer, kind, item):
                    digest.update(self._signature(kind, key, item))
        return {method: digest.hexdigest() for method, digest in digests.items()}

    def _signature(self, kind: str, key: str, item: Any) -> bytes:
        """An item as `views` hashes it, serialised once per item registered."""
        signed = self._signed.get((key, item))
        if signed is None:
            if len(self._signed) >= _MAX_SIGNED:  # items removed since are let go
                self._signed.clear()
            definition = [kind, key, item.definition(LATEST)]
            signed = self._signed[(key, item)] = orjson.dumps(definition, option=orjson.OPT_SORT_KEYS)
        return signed

    def _view(self, items: dict[str, Any], kind: str, viewer: Viewer) -> frozenset[tuple[str, int]]:
        """The items of one kind `viewer` sees, each by key and identity (a replaced item differs)."""
        granted = viewer.scopes if viewer is not None else None
        return frozenset(
            (key, id(item))
            for key, item in items.items()
            if permits(item.scopes, granted) and self.fn(viewer, kind, item)
        )
