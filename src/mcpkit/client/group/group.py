"""ClientGroup: many servers behind one client, one catalog, calls routed by name.

    async with ClientGroup.from_config("mcp.json") as group:
        for tool in group.search("create a github issue"):
            ...
        await group.call_tool("github.create_issue", {...})

Servers start concurrently; entering waits at most `start_timeout` for each one's first attempt. A server
that fails (or is slow) is reported in `status()`, retried with backoff, and its tools are absent until
it is up. Which calls are retried after a reconnect: only those that change nothing (lists, reads,
prompts/get, completion, ping). A tools/call is sent only on a live connection (waiting up to `wait`
seconds for one) and is never sent twice where it may have run: if the server goes away while it is in
flight, the caller gets ServerUnavailable. Only a call whose connection was refused (it reached no
server) is sent again once the server is back.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, Literal

import anyio
import orjson

from ...protocol.errors import INVALID_PARAMS, LocalError
from ...protocol.jsonrpc import JSON
from ...runtime.groups import single_error
from ...transports.http_client.backoff import Backoff
from ..client import Client
from ..handlers import maybe_await
from ..result_cache import ResultCache
from .cache import ScopedCache, endpoint
from .catalog import Catalog, Entry, build_catalog
from .config import GroupConfig, HttpServer, ServerSpec, load_config, parse_config
from .filters import Filters
from .member import Member, ServerUnavailable
from .names import Naming, NamingError
from .search import ToolIndex
from .templates import template_matches

__all__ = ["SEARCH_TOOL", "ClientGroup", "ServerUnavailable"]

SEARCH_TOOL: JSON = {
    "name": "search_tools",
    "description": "Search the available tools by what they do; returns the definitions of the best matches.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, in a few words"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
        },
        "required": ["query"],
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
}


class ClientGroup:
    """Clients of many servers under one lifecycle (`async with`) and one catalog.

    `servers`: name -> StdioServer/HttpServer, in the order collisions are settled. `separator`, `prefix`,
    `collisions`: see names.Naming. `filters`: the group's own, on catalog names. `wait`: how long a
    call waits for its server to be up. `ping_interval`: ping every server that often, so one that went
    away is found (and reconnected) without waiting for a call. `auth(name, spec)`: the httpx.Auth
    (such as mcpkit.client.oauth.OAuthClient) for an HTTP server, or None. `search_tool`: offer
    the `search_tools` meta-tool in `tools()`; "only": offer nothing else there, so a model sees one
    tool and then the definitions its searches return (every tool can still be called).
    `on_change(group)`: after each catalog rebuild. The rest (`timeout`, `sampling`, `era`, ...) goes to
    every server's Client; `server_options[name]` adds to or overrides them for one server.

    Caching: the catalog is the list cache (read at connection, again only on list_changed or a
    reconnect). `cache` holds the results servers mark `cacheScope: public` for their `ttlMs`
    (2026-07-28), per endpoint, across reconnects, and across groups given the same one; bounded by
    entries and bytes (4096 and 64 MiB by default). Private results stay in each Client's own cache.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerSpec],
        *,
        separator: str = ".",
        prefix: bool = True,
        collisions: str = "prefix",
        filters: Filters | None = None,
        search_tool: bool | Literal["only"] = False,
        on_change: Callable[[ClientGroup], Awaitable[None] | None] | None = None,
        start_timeout: float = 30.0,
        connect_timeout: float = 30.0,
        wait: float = 10.0,
        ping_interval: float | None = None,
        backoff: Backoff | None = None,
        cache: ResultCache | None = None,
        auth: Callable[[str, HttpServer], Any] | None = None,
        server_options: Mapping[str, JSON] | None = None,
        **client_options: Any,
    ) -> None:
        self.naming = Naming(separator, prefix, collisions)
        for name in servers:
            self.naming.check_server(name)
        self.filters = filters or Filters()
        self.search_tool = search_tool
        self.start_timeout = start_timeout
        self.wait = wait
        self.cache = cache if cache is not None else ResultCache(max_entries=4096, max_bytes=64 << 20)
        self._on_change = on_change
        self.members = {
            name: Member(
                name,
                spec,
                self._options(name, spec, auth, {**client_options, **(server_options or {}).get(name, {})}),
                backoff=backoff or Backoff(floor_ms=500, max_ms=30_000),
                connect_timeout=connect_timeout,
                on_change=self._member_changed,
                ping_interval=ping_interval,
            )
            for name, spec in servers.items()
        }
        self.catalog = Catalog()
        self._index: ToolIndex | None = None
        self._rebuilt = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._stack: AsyncExitStack | None = None

    def _options(
        self, name: str, spec: ServerSpec, auth: Callable[[str, HttpServer], Any] | None, given: JSON
    ) -> JSON:
        options = {"shared_cache": ScopedCache(self.cache, endpoint(spec)), **given}
        if auth is not None and isinstance(spec, HttpServer):
            options["auth"] = auth(name, spec)
        return options

    @classmethod
    def from_config(
        cls, config: GroupConfig | Mapping[str, Any] | str | os.PathLike[str], **options: Any
    ) -> ClientGroup:
        """A group of the servers in an `mcpServers` config (a path, parsed JSON, or a GroupConfig);
        keyword options override the file's `mcpkit` settings."""
        if isinstance(config, str | os.PathLike):
            config = load_config(config)
        elif not isinstance(config, GroupConfig):
            config = parse_config(dict(config))
        settings: JSON = {
            "separator": config.separator,
            "prefix": config.prefix,
            "collisions": config.collisions,
            "filters": config.filters,
        }
        return cls(config.servers, **{**settings, **options})

    # ---- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> ClientGroup:
        self._rebuild(strict=True)
        stack = AsyncExitStack()
        stack.enter_context(single_error())
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)
        self._tg, self._stack = tg, stack
        try:
            for member in self.members.values():
                tg.start_soon(member.run)
            with anyio.move_on_after(self.start_timeout):
                for member in self.members.values():
                    await member.settled.wait()
            self._rebuild(strict=True)
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        stack, self._stack, self._tg = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    # ---- the catalog -------------------------------------------------------------------------

    def _member_changed(self, name: str) -> None:
        self._rebuild(strict=False)
        if self._on_change is not None and self._tg is not None:
            self._tg.start_soon(maybe_await, self._on_change(self))

    def _rebuild(self, *, strict: bool) -> None:
        lists = {name: m.lists for name, m in self.members.items()}
        server_filters = {name: m.spec.filters for name, m in self.members.items()}
        try:
            self.catalog = build_catalog(lists, self.naming, server_filters, self.filters)
        except NamingError as exc:
            if strict:
                raise
            if str(exc) not in self.catalog.problems:  # the catalog before the collision stays
                self.catalog.problems.append(str(exc))
        self._index = None
        rebuilt, self._rebuilt = self._rebuilt, anyio.Event()
        rebuilt.set()

    async def changed(self) -> None:
        """Wait for the next catalog rebuild (a server came, went, or changed a list)."""
        await self._rebuilt.wait()

    def status(self) -> dict[str, JSON]:
        """Per server: state (starting, ready, down), tool count, last error, failed attempts in a row."""
        return {name: member.status() for name, member in self.members.items()}

    @property
    def problems(self) -> list[str]:
        """What the catalog left out and why (name rules, collisions, duplicate URIs)."""
        return list(self.catalog.problems)

    def tools(self) -> list[JSON]:
        """Every tool under its catalog name (with `search_tools` first when the group offers it; with
        `search_tool="only"`, just that one)."""
        defined = [e.definition for e in self.catalog.tools.values()]
        if self.search_tool == "only":
            return [SEARCH_TOOL]
        return [SEARCH_TOOL, *defined] if self.search_tool else defined

    def prompts(self) -> list[JSON]:
        return [e.definition for e in self.catalog.prompts.values()]

    def resources(self) -> list[JSON]:
        return [e.definition for e in self.catalog.resources.values()]

    def resource_templates(self) -> list[JSON]:
        return [e.definition for e in self.catalog.templates]

    def search(self, query: str, limit: int = 5) -> list[JSON]:
        """The tool definitions best matching `query` (BM25 over names, titles, descriptions, parameters)."""
        if self._index is None:
            self._index = ToolIndex(e.definition for e in self.catalog.tools.values())
        return self._index.search(query, limit)

    # ---- calls -------------------------------------------------------------------------------

    def client(self, server: str) -> Client:
        """The named server's connected Client (ServerUnavailable while it is not connected)."""
        member = self._member(server)
        if member.client is None:
            raise ServerUnavailable(f"server {server!r} is {member.state.value}")
        return member.client

    def _member(self, server: str) -> Member:
        member = self.members.get(server)
        if member is None:
            raise LocalError(
                f"no server {server!r} in this group (it has {', '.join(self.members)})", INVALID_PARAMS
            )
        return member

    async def _entry(self, kind: str, name: str) -> Entry:
        """The catalog entry for `name`; a server coming back brings its names back, so while the
        server the name points at (or, for a bare name, any server) is not up, this waits up to `wait`."""
        split = self.naming.split(name)
        named = self.members.get(split[0]) if split is not None else None
        awaited = [named] if named is not None else list(self.members.values())
        entry: Entry | None = getattr(self.catalog, kind).get(name)
        with anyio.move_on_after(self.wait):
            while entry is None and any(m.client is None for m in awaited):
                await self.changed()
                entry = getattr(self.catalog, kind).get(name)
        if entry is None and named is not None and named.client is None:
            await named.ready(0)  # raises ServerUnavailable, saying why
        if entry is None:
            close = difflib.get_close_matches(name, list(getattr(self.catalog, kind)), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise LocalError(f"no {kind[:-1]} {name!r} in this group{hint}", INVALID_PARAMS)
        return entry

    async def call_tool(self, name: str, arguments: JSON | None = None, **options: Any) -> JSON:
        """tools/call on the server owning `name`, by its own name (never retried; see the module doc).
        `search_tools` is answered here when the group offers it."""
        if self.search_tool and name == SEARCH_TOOL["name"]:
            return self._search_result(arguments or {})
        entry = await self._entry("tools", name)
        member = self.members[entry.server]
        return await member.use(
            lambda c: c.call_tool(entry.original, arguments, **options), retry=False, wait=self.wait
        )

    def _search_result(self, arguments: JSON) -> JSON:
        query, limit = arguments.get("query"), arguments.get("limit", 5)
        if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool):
            return {
                "content": [{"type": "text", "text": "search_tools takes a query string"}],
                "isError": True,
            }
        found = self.search(query, max(1, min(limit, 50)))
        text = orjson.dumps(found).decode()
        return {"content": [{"type": "text", "text": text}], "structuredContent": {"tools": found}}

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> JSON:
        entry = await self._entry("prompts", name)
        return await self.members[entry.server].use(
            lambda c: c.get_prompt(entry.original, arguments), retry=True, wait=self.wait
        )

    def _owner(self, uri: str) -> str | None:
        entry = self.catalog.resources.get(uri)
        if entry is not None:
            return entry.server
        return next((t.server for t in self.catalog.templates if template_matches(t.name, uri)), None)

    async def _resource_server(self, uri: str) -> str:
        """The server listing `uri` or a template matching it; while some server is not up, that may
        be the one, so this waits (up to `wait`) for it to come back and list its resources."""
        owner = self._owner(uri)
        with anyio.move_on_after(self.wait):
            while owner is None and any(m.client is None for m in self.members.values()):
                await self.changed()
                owner = self._owner(uri)
        if owner is None:
            raise LocalError(f"no server in this group offers {uri!r}: pass server=", INVALID_PARAMS)
        return owner

    async def read_resource(self, uri: str, server: str | None = None) -> JSON:
        """resources/read on the server listing `uri` (or matching it with a template), or on `server`."""
        member = self._member(server or await self._resource_server(uri))
        return await member.use(lambda c: c.read_resource(uri), retry=True, wait=self.wait)

    async def subscribe(self, uri: str, server: str | None = None) -> None:
        """Updates of `uri` reach `on_notification` (resources/subscribe, or the 2026-07-28 listen
        stream), renewed after every reconnect."""
        member = self._member(server or await self._resource_server(uri))
        await member.subscribe(uri, self.wait)

    async def unsubscribe(self, uri: str, server: str | None = None) -> None:
        member = self._member(server or await self._resource_server(uri))
        await member.unsubscribe(uri, self.wait)

    async def complete(
        self, ref: JSON, argument: str, value: str, context: dict[str, str] | None = None
    ) -> JSON:
        """completion/complete for a prompt (`{"type": "ref/prompt", "name": <catalog name>}`) or a
        resource template (`{"type": "ref/resource", "uri": <its URI template>}`), on its server."""
        if ref.get("type") == "ref/prompt":
            entry = await self._entry("prompts", str(ref.get("name")))
            server, ref = entry.server, {**ref, "name": entry.original}
        else:
            uri = str(ref.get("uri"))
            owners = [t.server for t in self.catalog.templates if t.name == uri]
            server = owners[0] if owners else await self._resource_server(uri)
        return await self.members[server].use(
            lambda c: c.complete(ref, argument, value, context), retry=True, wait=self.wait
        )

    async def ping(self, server: str) -> None:
        await self._member(server).use(lambda c: c.ping(), retry=True, wait=self.wait)
