"""One catalog of many servers' tools, prompts, resources and templates, built from what each one listed.

Tools and prompts get catalog names (names.py). Resources and templates keep their URIs: a tool's
resource_link and an embedded resource name the server's own URI, so a renamed one would lead nowhere; a
URI is routed to the server that lists it (or whose template matches it), and one two servers list goes
to the first and is reported. Pure: no I/O. The group rebuilds it whenever a server connects, goes away
or says its list changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...protocol.jsonrpc import JSON
from .filters import Filters
from .names import Naming, NamingError, valid_tool_name

__all__ = ["Catalog", "Entry", "build_catalog"]

LIST_KEYS = ("tools", "prompts", "resources", "resourceTemplates")


@dataclass(frozen=True)
class Entry:
    """A catalog item: its catalog name (or URI), the server it belongs to, that server's own name for
    it, and its definition as the model sees it (the server's, renamed)."""

    name: str
    server: str
    original: str
    definition: JSON


@dataclass
class Catalog:
    tools: dict[str, Entry] = field(default_factory=dict)
    prompts: dict[str, Entry] = field(default_factory=dict)
    resources: dict[str, Entry] = field(default_factory=dict)
    templates: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def build_catalog(
    lists: Mapping[str, Mapping[str, list[JSON]]],
    naming: Naming,
    server_filters: Mapping[str, Filters],
    group_filters: Filters,
) -> Catalog:
    """The catalog of `lists` (server -> list key -> items), in server order; what was left out and why
    is in `problems`. NamingError when the collision policy is "error" and two servers share a name."""
    catalog = Catalog()
    for kind, out in (("tools", catalog.tools), ("prompts", catalog.prompts)):
        admitted = {
            server: [
                item
                for item in by_kind.get(kind, [])
                if isinstance(item.get("name"), str) and server_filters[server].admits(kind, item["name"])
            ]
            for server, by_kind in lists.items()
        }
        _name_items(kind, admitted, naming, group_filters, out, catalog.problems)
    for server, by_kind in lists.items():
        for key, uri_key in (("resources", "uri"), ("resourceTemplates", "uriTemplate")):
            for item in by_kind.get(key, []):
                uri = item.get(uri_key)
                if not isinstance(uri, str):
                    continue
                if not (
                    server_filters[server].admits("resources", uri) and group_filters.admits("resources", uri)
                ):
                    continue
                entry = Entry(uri, server, uri, item)
                if key == "resourceTemplates":
                    catalog.templates.append(entry)
                elif uri in catalog.resources:
                    catalog.problems.append(
                        f"{server}: resource {uri} is also {catalog.resources[uri].server}'s"
                    )
                else:
                    catalog.resources[uri] = entry
    return catalog


def _name_items(
    kind: str,
    admitted: Mapping[str, list[JSON]],
    naming: Naming,
    group_filters: Filters,
    out: dict[str, Entry],
    problems: list[str],
) -> None:
    counts = Counter(item["name"] for items in admitted.values() for item in items)
    for server, items in admitted.items():
        for item in items:
            own: str = item["name"]
            name = own if not naming.prefix else naming.join(server, own)
            if not naming.prefix and counts[own] > 1:
                if naming.collisions == "error":
                    raise NamingError(f"{kind[:-1]} {own!r} is offered by more than one server")
                if naming.collisions == "prefix":
                    name = naming.join(server, own)
                elif own in out:
                    problems.append(f"{server}: {kind[:-1]} {own!r} is hidden by {out[own].server}'s")
                    continue
            if kind == "tools" and not valid_tool_name(name):
                problems.append(
                    f"{server}: tool {own!r} left out: {name!r} breaks the spec's tool-name rules"
                )
                continue
            if not group_filters.admits(kind, name):
                continue
            if name in out:
                problems.append(f"{server}: {kind[:-1]} {name!r} is already {out[name].server}'s")
                continue
            out[name] = Entry(name, server, own, {**item, "name": name})
