"""Mounting one server into another: the child's tools, prompts, resources, templates and completions
offered by the parent under a prefix, kept in step with the child as it changes.

Names: a tool or prompt `refund` of a child mounted at `billing` is `billing_refund`. The spec's tool
name guidance (2025-11-25, "Tool Names") allows ASCII letters, digits, `_`, `-` and `.`; `_` is the
default separator because model APIs behind many clients refuse `.` in a function name.

URIs: the prefix becomes the first segment after the scheme and its `//`: `notes://{id}` is served as
`notes://billing/{id}`, `file:///a.txt` as `file://billing//a.txt`, `urn:x` as `urn:billing/x` (the
rule fastmcp's "path" format uses). A URI with no scheme cannot be mounted (ValueError).

The child's broadcasts reach the parent's clients: its list changes (as the parent's list_changed),
notifications/resources/updated (with the prefixed URI) and log messages. A mounted child is served
through its parent: its own middleware and lifespan are not run, handlers get the parent's context.

Collisions: mounting refuses (ValueError naming them) a child whose items would take names or URIs the
parent already serves, its own or another mount's: replacing one would silently drop it and its scopes.
An item the child adds later under a taken name is not offered (a warning names it).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from typing import Any, Final

from .peers import Peers
from .registry import LIST_CHANGED, Registry

__all__ = ["Mount", "prefixed_uri"]

log = logging.getLogger("mcpkit")

_PREFIX: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(//)?")
_KINDS: Final = ("tools", "prompts", "resources", "resourceTemplates")


def prefixed_uri(uri: str, prefix: str) -> str:
    """`uri` (or a URI template) as the parent serves it: `prefix/` right after `scheme:` and `//`."""
    scheme = _SCHEME.match(uri)
    if scheme is None:
        raise ValueError(f"cannot mount {uri!r}: a mounted resource URI needs a scheme")
    return f"{scheme.group()}{prefix}/{uri[scheme.end() :]}"


class Mount:
    """The child registry's items copied into the parent's under `prefix`, renewed on each change; what
    the child broadcasts (through its `MountedPeers`) goes to the parent's peers."""

    def __init__(
        self,
        parent: Registry,
        parent_peers: Peers,
        child: Registry,
        prefix: str,
        separator: str = "_",
    ) -> None:
        if _PREFIX.fullmatch(prefix) is None or _PREFIX.fullmatch(separator) is None:
            raise ValueError(f"a mount prefix and separator are tool-name characters, not {prefix!r}")
        if child is parent:
            raise ValueError("a server cannot be mounted into itself")
        self.parent, self.peers, self.child = parent, parent_peers, child
        self.prefix, self.separator = prefix, separator
        self._offered: dict[str, dict[str, Any]] = {kind: {} for kind in _KINDS}
        self._origin: dict[str, dict[str, str]] = {kind: {} for kind in _KINDS}  # parent key: child's
        clashes = [f"{kind} {key!r}" for kind in _KINDS for key in self._clashes(kind, self._fresh(kind)[0])]
        if clashes:
            raise ValueError(f"cannot mount at {prefix!r}: the parent already serves {', '.join(clashes)}")
        for kind in _KINDS:
            self._sync(kind)
        parent.completions.include(child.completions, self._child_target)

    def name(self, name: str) -> str:
        """The parent's name for the child's tool or prompt `name`."""
        return f"{self.prefix}{self.separator}{name}"

    def uri(self, uri: str) -> str:
        """The parent's URI for the child's resource (or template) `uri`."""
        return prefixed_uri(uri, self.prefix)

    def _renamed(self, kind: str, item: Any) -> Any:
        if kind in ("tools", "prompts"):
            return dataclasses.replace(item, name=self.name(item.name))
        if kind == "resources":
            return dataclasses.replace(item, uri=self.uri(item.uri))
        return dataclasses.replace(item, template=type(item.template)(self.uri(item.template.template)))

    def _fresh(self, kind: str) -> tuple[dict[str, Any], dict[str, str]]:
        """The child's items of one kind now, under the parent's keys, and the child's key of each."""
        fresh, origin = {}, {}
        for key, item in self.child.of(kind).items():
            renamed = self._renamed(kind, item)
            parent_key = renamed.name if kind in ("tools", "prompts") else self.uri(key)
            fresh[parent_key], origin[parent_key] = renamed, key
        return fresh, origin

    def _clashes(self, kind: str, fresh: dict[str, Any]) -> list[str]:
        """The keys of `fresh` the parent serves already, other than as this mount's."""
        taken, mine = self.parent.of(kind), self._offered[kind]
        return sorted(key for key in fresh if key in taken and taken[key] is not mine.get(key))

    def _sync(self, kind: str) -> None:
        """Replace what this mount offers of one kind with the child's items now."""
        fresh, origin = self._fresh(kind)
        for key in self._clashes(kind, fresh):
            log.warning(
                "mount %r: not offering %s %r, a name the parent already serves", self.prefix, kind, key
            )
            del fresh[key], origin[key]
        self.parent.replace(kind, self._offered[kind], fresh)
        self._offered[kind], self._origin[kind] = fresh, origin

    def _child_target(self, kind: str, target: str) -> str | None:
        """The child's prompt name or template URI behind the parent's, if this mount offers it."""
        return self._origin["prompts" if kind == "ref/prompt" else "resourceTemplates"].get(target)

    # ---- what the child's MountedPeers hand over -----------------------------------------------

    def changed(self, method: str) -> None:
        for kind in _KINDS:
            if LIST_CHANGED[kind] == method:
                self._sync(kind)

    async def resource_updated(self, uri: str) -> None:
        await self.peers.resource_updated(self.uri(uri))

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        await self.peers.log(level, data, logger)


class MountedPeers(Peers):
    """A mounted server's peers: its clients are the parent's, so what it broadcasts goes through the
    mount (renamed into the parent's items) to the parent's peers."""

    def __init__(
        self, mount: Mount, *, max_subscriptions: int | None = 100, max_uri_length: int | None = 2048
    ) -> None:
        super().__init__(max_subscriptions=max_subscriptions, max_uri_length=max_uri_length)
        self.mount = mount

    def changed(self, method: str) -> None:
        self.mount.changed(method)

    async def resource_updated(self, uri: str) -> None:
        await self.mount.resource_updated(uri)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        await self.mount.log(level, data, logger)
