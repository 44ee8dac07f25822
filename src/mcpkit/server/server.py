"""The high-level Server: register tools, resources and prompts; serve any MessageStream."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from ..protocol import events as ev
from ..protocol.capabilities import Role
from ..protocol.connection import Connection
from ..protocol.errors import MCPError
from ..protocol.http_request_headers import tool_headers
from ..protocol.modern import INPUT_REQUIRED_METHODS
from ..protocol.versions import SUPPORTED_VERSIONS
from ..runtime.session import Session
from ..runtime.stream import MessageStream
from .caching import CacheHint
from .completion import Completions
from .context import Context
from .handlers import HANDLERS
from .prompts import Prompt
from .request_state import StateSealer
from .resources import Resource, ResourceTemplate, not_found
from .round_trip import InputRequired, RoundTrip
from .subscriptions import Listener
from .tools import Tool, tool_annotations

__all__ = ["Server"]

JSON = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Any])

_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "resourceTemplates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}


@dataclass(eq=False)
class _Peer:
    session: Session
    subscriptions: set[str] = field(default_factory=set)


class Server:
    """An MCP server. Handlers are plain functions; a parameter typed `Context` receives the context."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int | None = None,
        client_request_timeout: float | None = 300.0,
        logging: bool = True,
        cache: CacheHint | None = None,
        state_key: bytes | None = None,
        state_ttl: float = 600.0,
        versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        identify: bool = True,
        mask_errors: bool = False,
        max_in_flight: int | None = 100,
        max_worker_threads: int | None = 8,
    ) -> None:
        """`cache`: the hint on stateless list and discover results (per resource: `cache=` there).
        `state_key`: the HMAC key sealing requestState; give every replica the same one.
        `versions`: the protocol versions served (both eras by default).
        `identify`: name the server in every stateless result's `_meta` (2026-07-28: SHOULD, unless
        configured not to).
        `mask_errors`: a tool's unexpected exception reaches the model as a generic message instead
        of its text (which may hold paths, SQL or secrets); ToolError and MCPError messages, raised on
        purpose, are kept. The traceback is logged either way.
        `max_in_flight`: requests of one session (stdio, an HTTP session) handled at once; one more is
        answered with SERVER_BUSY (-32010). `max_worker_threads`: the worker threads one session's sync
        handlers hold at once, so it cannot take the whole pool (anyio's 40). None: no cap."""
        self.max_in_flight = max_in_flight
        self.max_worker_threads = max_worker_threads
        self.versions = versions
        self.identify = identify
        self.mask_errors = mask_errors
        self.info: JSON = {"name": name, "version": version}
        if title:
            self.info["title"] = title
        self.instructions = instructions
        self.page_size = page_size
        self.client_request_timeout = client_request_timeout
        self.logging = logging
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        self.completions = Completions()
        self._peers: dict[Session, _Peer] = {}
        self._roots_changed: list[Callable[[Session], Any]] = []
        self._list_cache: dict[tuple[str, str, int], JSON] = {}
        self.cache = cache or CacheHint()
        self.state_sealer = StateSealer(state_key, ttl=state_ttl)
        self.listeners: set[Listener] = set()

    # ---- registration ------------------------------------------------------------------------

    def tool(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Register a function as a tool; see `add_tool` for the options."""

        def register(fn: F) -> F:
            self.add_tool(fn, name=name, **options)
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: JSON | None = None,
        output_schema: JSON | None = None,
        structured_output: bool | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        icons: list[JSON] | None = None,
        meta: JSON | None = None,
    ) -> Tool:
        hints = tool_annotations(
            read_only=read_only, destructive=destructive, idempotent=idempotent, open_world=open_world
        )
        tool = Tool.from_function(
            fn,
            context_type=Context,
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            structured_output=structured_output,
            title=title,
            annotations=hints,
            icons=icons,
            meta=meta,
        )
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        del self.tools[name]
        self._changed("tools")

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a reader for a URI, or for an RFC 6570 URI template such as `notes://{id}`."""

        def register(fn: F) -> F:
            self.add_resource(uri, fn, **options)
            return fn

        return register

    def add_resource(
        self,
        uri: str,
        fn: Callable[..., Any] | None = None,
        *,
        content: str | bytes | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: JSON | None = None,
        icons: list[JSON] | None = None,
        meta: JSON | None = None,
        size: int | None = None,
        cache: CacheHint | None = None,
        allow_traversal: bool = False,
    ) -> None:
        """Register a resource, or a template when `uri` has `{...}` expressions.

        A template refuses, as not found, values with a `..` segment, an absolute path or NUL
        (`%2F` decodes into a simple `{var}` too); `allow_traversal=True` hands them to the reader.
        """
        if fn is None and content is None:
            raise TypeError("add_resource needs a reader function or content")
        described: JSON = {
            "name": name or (fn.__name__ if fn else uri),
            "title": title,
            "description": description,
            "mime_type": mime_type,
            "annotations": annotations,
            "icons": icons,
            "meta": meta,
            "size": size,
            "cache": cache,
        }
        from .uri_template import UriTemplate  # ~5 ms to import: only once a resource is registered

        if fn is not None and UriTemplate.is_template(uri):
            described["allow_traversal"] = allow_traversal
            self.templates[uri] = ResourceTemplate.compile(uri, fn, Context, **described)
            self._changed("resourceTemplates")
            return
        if allow_traversal:
            raise TypeError("allow_traversal applies to URI templates only")
        from .signature import inspect_function

        sig = inspect_function(fn, context_type=Context, structured_output=False) if fn is not None else None
        self.resources[uri] = Resource(uri=uri, read_fn=fn, signature=sig, content=content, **described)
        self._changed("resources")

    def remove_resource(self, uri: str) -> None:
        if self.resources.pop(uri, None) is not None:
            self._changed("resources")
        elif self.templates.pop(uri, None) is not None:
            self._changed("resourceTemplates")
        else:
            raise KeyError(uri)

    def prompt(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, **options)
            return fn

        return register

    def add_prompt(self, fn: Callable[..., Any], *, name: str | None = None, **options: Any) -> Prompt:
        prompt = Prompt.from_function(fn, context_type=Context, name=name, **options)
        self.prompts[prompt.name] = prompt
        self._changed("prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self._changed("prompts")

    def completion(
        self, *, prompt: str | None = None, template: str | None = None, argument: str
    ) -> Callable[[F], F]:
        """Register `fn(value, context_arguments) -> list[str]` completing one argument."""

        def register(fn: F) -> F:
            self.completions.add(prompt, template, argument, fn)
            return fn

        return register

    # ---- capabilities and notifications ------------------------------------------------------

    def capabilities(self) -> JSON:
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
        return caps

    def _changed(self, kind: str) -> None:
        for key in [k for k in self._list_cache if k[0] == kind]:
            del self._list_cache[key]
        method = _CHANGED[kind]
        for peer in self._peers.values():
            peer.session.notify_soon(method, None)
        for listener in self.listeners:
            listener.offer(method)

    async def notify_resource_updated(self, uri: str) -> None:
        """notifications/resources/updated to every session subscribed to `uri`."""
        for peer in list(self._peers.values()):
            if uri in peer.subscriptions:
                await peer.session.notify("notifications/resources/updated", {"uri": uri})
        for listener in self.listeners:
            listener.offer("notifications/resources/updated", {"uri": uri})

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """A log message to every session whose level lets it through."""
        for peer in list(self._peers.values()):
            if peer.session.ready.is_set():
                await peer.session.send_message(peer.session.connection.log(level, data, logger))

    # ---- serving -----------------------------------------------------------------------------

    def connection(self) -> Connection:
        connection = Connection(
            Role.SERVER,
            info=self.info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
            versions=self.versions,
        )
        connection.server_info_in_results = self.identify
        return connection

    async def serve(self, stream: MessageStream) -> None:
        """Serve one peer over `stream` until it closes."""
        session = Session(
            self.connection(),
            stream,
            self._on_request,
            self._on_notification,
            max_in_flight=self.max_in_flight,
            max_worker_threads=self.max_worker_threads,
        )
        self._peers[session] = _Peer(session)
        try:
            await session.run()
        finally:
            del self._peers[session]

    def on_roots_changed(self, fn: Callable[[Session], Any]) -> Callable[[Session], Any]:
        """Register `fn(session)` (sync or async), called on notifications/roots/list_changed."""
        self._roots_changed.append(fn)
        return fn

    async def _on_notification(self, session: Session, note: ev.NotificationReceived) -> None:
        if note.method == "notifications/roots/list_changed":
            for fn in self._roots_changed:
                outcome = fn(session)
                if inspect.isawaitable(outcome):
                    await outcome

    async def _on_request(self, session: Session, request: ev.RequestReceived) -> JSON:
        handler = HANDLERS.get(request.method)
        if handler is None:  # declared in the table but this server offers no handler for it
            raise MCPError(-32601, f"Method not found: {request.method!r}")
        params, meta = request.params, request.params.get("_meta")
        trip = None
        if request.negotiated.stateless and request.method in INPUT_REQUIRED_METHODS:
            trip = RoundTrip.from_params(params, self.state_sealer, request.method)
        ctx = Context(
            self, session, request.id, meta if isinstance(meta, dict) else None, request.negotiated, trip
        )
        try:
            result: JSON = await handler(self, ctx, params)
        except InputRequired as need:
            assert trip is not None  # only a round trip raises it
            return trip.result(need, self.state_sealer)
        return result

    def mirrored_headers(self, tool: str) -> list[tuple[str, tuple[str, ...]]]:
        """The `x-mcp-header` parameters of `tool` (Streamable HTTP checks them against the body)."""
        found = self.tools.get(tool)
        return list(tool_headers({"inputSchema": found.input_schema})) if found is not None else []

    def cache_hint_for(self, uri: str) -> CacheHint:
        resource = self.resources.get(uri)
        hint = resource.cache if resource is not None else None
        if hint is None:
            hint = next((t.cache for t in self.templates.values() if t.template.match(uri) is not None), None)
        return hint or self.cache

    def registry(self, kind: str) -> dict[str, Any]:
        registries: dict[str, dict[str, Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "resourceTemplates": self.templates,
            "prompts": self.prompts,
        }
        return registries[kind]

    async def read_resource(self, uri: str, ctx: Context) -> list[JSON]:
        resource = self.resources.get(uri)
        if resource is not None:
            return await resource.read(ctx)
        for template in self.templates.values():
            contents = await template.read(uri, ctx)
            if contents is not None:
                return contents
        raise not_found(uri)

    def run(self, *, max_line: int | None = None, eof_grace: float | None = None) -> None:
        """Serve over stdio until stdin closes or SIGTERM (what `python server.py` should call).

        After stdin closes, requests already read get `eof_grace` seconds (default 5) to be answered.
        """
        from ..transports.stdio import serve_stdio

        options: dict[str, Any] = {"max_line": max_line} if max_line is not None else {}
        if eof_grace is not None:
            options["eof_grace"] = eof_grace
        anyio.run(functools.partial(serve_stdio, self.serve, **options))
        # A sync tool still running on a worker thread cannot be interrupted; the interpreter would
        # wait for it at exit, so once serving is over the process leaves without waiting.
        if any(
            t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()
        ):
            sys.stderr.flush()
            os._exit(0)
