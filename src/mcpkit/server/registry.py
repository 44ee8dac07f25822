"""What a server offers: tools, resources, templates, prompts and completions, the capabilities they
imply, and list results cached per version and page. It knows no session: who hears of a change is
the `on_change` callback's business.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Final

import orjson

from ..protocol.http_request_headers import tool_headers
from ..protocol.jsonrpc import JSON
from ..protocol.methods import METHODS, MethodSpec
from ..protocol.pagination import canonical, page
from ..protocol.versions import is_stateless
from .caching import CacheHint
from .completion import Completions
from .extensions import Extension
from .prompts import Prompt
from .request import RequestContext
from .resources import Resource, ResourceTemplate, not_found
from .scopes import permits, visible
from .tools import Tool

__all__ = ["LIST_CHANGED", "Registry", "Shows"]

# Whether one caller sees an item: `shows(kind, item)` (server/visibility.py); None: all items.
Shows = Callable[[str, Any], bool]

# The list kinds (the key each list result carries its items under) and what announces a change.
LIST_CHANGED: Final = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "resourceTemplates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}


_MAX_CACHED_PAGES: Final = 4096  # list results kept at most (scoped lists multiply the variants)


def _ignore(_method: str) -> None:
    return None


def _shown(shows: Shows | None, kind: str, item: Any) -> bool:
    return shows is None or shows(kind, item)


class Registry:
    """The primitives one server offers, and the answers derived from them alone."""

    def __init__(
        self,
        *,
        instructions: str | None = None,
        page_size: int | None = None,
        logging: bool = True,
        cache: CacheHint | None = None,
        mask_errors: bool = False,
        on_change: Callable[[str], None] = _ignore,
    ) -> None:
        """`on_change(method)` hears the list_changed notification each add or remove calls for."""
        self.instructions = instructions
        self.page_size = page_size
        self.logging = logging
        self.cache = cache or CacheHint()
        self.mask_errors = mask_errors
        self.on_change = on_change
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        self.completions = Completions()
        self.declared: JSON = {}  # capabilities offered beyond what is registered (a proxy's: its remote's)
        self.extensions: dict[str, Extension] = {}  # by identifier (server/extensions.py)
        # Keyed by kind, version, first item, the scopes of that list's items the caller holds, and
        # the keys of the items a visibility hook shows the caller (None: no hook).
        self._pages: dict[tuple[str, str, int, frozenset[str], frozenset[str] | None], JSON] = {}
        self._scopes_by_kind: dict[str, frozenset[str]] = {}  # see _scopes_used; dropped on each change

    # ---- changes -------------------------------------------------------------------------------

    def add_tool(self, tool: Tool) -> Tool:
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        del self.tools[name]
        self._changed("tools")

    def add_resource(self, resource: Resource | ResourceTemplate) -> Resource | ResourceTemplate:
        if isinstance(resource, ResourceTemplate):
            self.templates[resource.template.template] = resource
            self._changed("resourceTemplates")
        else:
            self.resources[resource.uri] = resource
            self._changed("resources")
        return resource

    def remove_resource(self, uri: str) -> None:
        """Remove the resource or template registered under `uri`; KeyError if there is none."""
        if self.resources.pop(uri, None) is not None:
            self._changed("resources")
        elif self.templates.pop(uri, None) is not None:
            self._changed("resourceTemplates")
        else:
            raise KeyError(uri)

    def add_prompt(self, prompt: Prompt) -> Prompt:
        self.prompts[prompt.name] = prompt
        self._changed("prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self._changed("prompts")

    def add_extension(self, extension: Extension) -> Extension:
        """Declare `extension` and serve its methods (a method of two extensions: the later one's)."""
        self.extensions[extension.identifier] = extension
        return extension

    def extension_for(self, method: str) -> Extension | None:
        """The extension whose method `method` is, if any."""
        return next((e for e in self.extensions.values() if method in e.handlers), None)

    def extension_rules(self) -> dict[str, MethodSpec]:
        """The core's rules for the extension methods this server serves."""
        return {name: rule for e in self.extensions.values() for name, rule in e.rules.items()}

    def replace(self, kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Swap the items `old` of one list kind for `new` (a mount's, server/mount.py): one change.
        An item of `old` since replaced by another under its key is left alone."""
        items = self.of(kind)
        for key, item in old.items():
            if items.get(key) is item:
                del items[key]
        items.update(new)
        if old or new:
            self._changed(kind)

    def _changed(self, kind: str) -> None:
        for key in [k for k in self._pages if k[0] == kind]:
            del self._pages[key]
        self._scopes_by_kind.pop(kind, None)
        self.on_change(LIST_CHANGED[kind])

    # ---- answers -------------------------------------------------------------------------------

    def capabilities(self) -> JSON:
        """The server capabilities what is registered now calls for."""
        caps: JSON = {}
        if self.logging:
            caps["logging"] = {}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completions:
            caps["completions"] = {}
        if any(tool.task != "forbidden" for tool in self.tools.values()):
            # 2025-11-25 (the core leaves it out for other versions; 2026-07-28 has the extension)
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        if self.extensions:
            caps["extensions"] = {e.identifier: dict(e.settings) for e in self.extensions.values()}
        return {**caps, **self.declared} if self.declared else caps

    def of(self, kind: str) -> dict[str, Any]:
        """The items of one list kind ("tools", "resources", "resourceTemplates", "prompts")."""
        kinds: dict[str, dict[str, Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "resourceTemplates": self.templates,
            "prompts": self.prompts,
        }
        return kinds[kind]

    def listing(
        self,
        kind: str,
        version: str,
        cursor: Any,
        granted: frozenset[str] | None = None,
        shows: Shows | None = None,
    ) -> JSON:
        """One page of a list result, of the items a caller granted `granted` scopes may see (None:
        no token, all of them) and `shows` shows; -32602 for a cursor this server did not issue."""
        items = self.of(kind)
        used = self._scopes_used(kind)
        held = used if granted is None else used & granted
        shown: Collection[Any] = items.values() if held == used else visible(items.values(), granted)
        view: frozenset[str] | None = None
        if shows is not None:
            kept = {k: i for k, i in items.items() if permits(i.scopes, granted) and shows(kind, i)}
            shown, view = kept.values(), frozenset(kept)
        start, stop, next_cursor = page(len(shown), cursor, self.page_size)
        # Keyed by the decoded page, and only pages the server's own cursors lead to are kept, so the
        # cache holds one entry per version, page, subset of the list's scopes callers hold and view.
        key = (kind, version, start, held, view)
        cached = self._pages.get(key)
        if cached is not None:
            return cached
        chosen = list(shown)[start:stop]
        # Serialised once per version and page; the cache is dropped whenever the list changes.
        result: JSON = {kind: orjson.Fragment(orjson.dumps([i.definition(version) for i in chosen]))}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if is_stateless(version):
            result.update(self.cache.fields())
        if canonical(start, self.page_size) and len(self._pages) < _MAX_CACHED_PAGES:
            self._pages[key] = result
        return result

    def _scopes_used(self, kind: str) -> frozenset[str]:
        """The scopes the items of one list ask for, worked out once per change of that list."""
        used = self._scopes_by_kind.get(kind)
        if used is None:
            used = self._scopes_by_kind[kind] = frozenset().union(*(i.scopes for i in self.of(kind).values()))
        return used

    @property
    def cached_pages(self) -> int:
        """How many list results are kept (bounded by versions x pages of each list)."""
        return len(self._pages)

    def knows(self, uri: str, shows: Shows | None = None) -> bool:
        """Whether `uri` names a resource, or one a template serves (of those `shows` shows)."""
        resource = self.resources.get(uri)
        if resource is not None and _shown(shows, "resources", resource):
            return True
        return self._serving_template(uri, shows) is not None

    def _serving_template(self, uri: str, shows: Shows | None = None) -> ResourceTemplate | None:
        """The first template that serves `uri` (its values fit the reader), of those `shows` shows."""
        return next(
            (
                t
                for t in self.templates.values()
                if _shown(shows, "resourceTemplates", t) and t.arguments(uri) is not None
            ),
            None,
        )

    async def read_resource(self, uri: str, ctx: RequestContext, shows: Shows | None = None) -> list[JSON]:
        """The contents of `uri` from the items `shows` shows; -32002 (resource not found) when none
        of them serves it."""
        resource = self.resources.get(uri)
        if resource is not None and _shown(shows, "resources", resource):
            return await resource.read(ctx)
        for template in self.templates.values():
            if not _shown(shows, "resourceTemplates", template):
                continue
            contents = await template.read(uri, ctx)
            if contents is not None:
                return contents
        raise not_found(uri)

    def cache_hint_for(self, uri: str) -> CacheHint:
        """The hint on a stateless read of `uri`: its resource's, its template's, else the server's."""
        resource = self.resources.get(uri)
        hint = resource.cache if resource is not None else None
        if hint is None:
            hint = next((t.cache for t in self.templates.values() if t.template.match(uri) is not None), None)
        return hint or self.cache

    def scopes_for(self, method: str, params: JSON, shows: Shows | None = None) -> frozenset[str]:
        """The scopes a request needs: those of the tool, prompt, resource or template it names (of
        every resource a subscriptions/listen names), of the items `shows` shows: a hidden item asks
        for none, so a refusal cannot tell that it exists."""
        spec = METHODS.get(method)
        # unsubscribing gives nothing back, so no scope guards it
        if spec is not None and spec.item is not None and method != "resources/unsubscribe":
            named = params.get(spec.item)
            if not isinstance(named, str):
                return frozenset()
            return self._item_scopes(spec.capability[:1], named, shows)
        if method == "completion/complete":
            return self._completion_scopes(params.get("ref"), shows)
        if method == "subscriptions/listen":  # its acknowledgement names the URIs, its updates follow them
            wanted = params.get("notifications")
            uris = wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None
            listed = [uri for uri in uris if isinstance(uri, str)] if isinstance(uris, list) else []
            return frozenset().union(*(self.resource_scopes(uri, shows) for uri in listed))
        return frozenset()

    def resource_scopes(self, uri: str, shows: Shows | None = None) -> frozenset[str]:
        """The scopes reading `uri` needs: its resource's, else those of the first template serving it
        (of the items `shows` shows)."""
        resource = self.resources.get(uri)
        if resource is not None and _shown(shows, "resources", resource):
            return resource.scopes
        template = self._serving_template(uri, shows)
        return template.scopes if template is not None else frozenset()

    def _item_scopes(self, feature: tuple[str, ...], named: str, shows: Shows | None) -> frozenset[str]:
        """The scopes of the tool, prompt or resource `named`, by the capability its method needs."""
        if not feature:  # a task names no scoped item
            return frozenset()
        if feature == ("resources",):  # a URI may be served by a template
            return self.resource_scopes(named, shows)
        return self._scopes_of(feature[0], named, shows)

    def _scopes_of(self, kind: str, key: Any, shows: Shows | None) -> frozenset[str]:
        item = self.of(kind).get(key) if isinstance(key, str) else None
        scopes: frozenset[str] = (
            item.scopes if item is not None and _shown(shows, kind, item) else frozenset()
        )
        return scopes

    def _completion_scopes(self, ref: Any, shows: Shows | None) -> frozenset[str]:
        if not isinstance(ref, dict):
            return frozenset()
        if ref.get("type") == "ref/prompt":
            return self._scopes_of("prompts", ref.get("name"), shows)
        return self._scopes_of("resourceTemplates", ref.get("uri"), shows)

    def mirrored_headers(self, tool: str, shows: Shows | None = None) -> list[tuple[str, tuple[str, ...]]]:
        """The `x-mcp-header` parameters of `tool` (Streamable HTTP checks them against the body), if
        `shows` shows it."""
        found = self.tools.get(tool)
        if found is None or not _shown(shows, "tools", found):
            return []
        return list(tool_headers({"inputSchema": found.input_schema}))
