"""The high-level Server: register tools, resources and prompts; serve any MessageStream."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..protocol import events as ev
from ..protocol.capabilities import Role
from ..protocol.connection import Connection
from ..protocol.jsonrpc import JSON, RequestId
from ..protocol.versions import SUPPORTED_VERSIONS
from ..runtime.origin import RECEIVED_FROM
from ..runtime.session import Session
from ..runtime.stream import MessageStream, StreamAttribute
from ..runtime.thread_share import leave_if_threads_linger
from ..runtime.tracing import TracingOption
from .asking import asker_for
from .caching import CacheHint
from .completion import Completions
from .context import Context
from .extensions import Extension
from .handlers import handler_for
from .lifespan import Lifespan, LifespanFactory
from .middleware import Chain
from .mount import Mount, MountedPeers
from .on_registry import OnPeers, OnRegistry, OnServices, install_visibility
from .peers import Peers
from .prompts import Prompt
from .registry import Registry
from .request_state import StateSealer
from .resources import Resource, ResourceTemplate, resource_from
from .round_trip import InputRequired, RoundTrip
from .scopes import require
from .services import Services
from .skills import Skill, add_skill
from .tasks.engine import TaskEngine
from .tools import Tool
from .tracing import ServerTracing
from .visibility import Viewer, VisibleFn

__all__ = ["Server"]

F = TypeVar("F", bound=Callable[..., Any])


def registering(add: Callable[[Any], object]) -> Callable[[F], F]:
    """A decorator handing the function to `add` and returning it unchanged."""

    def register(fn: F) -> F:
        add(fn)
        return fn

    return register


class Server:
    """An MCP server. Handlers are plain functions; a parameter typed `Context` receives the context.

    `cache`: the hint on stateless list and discover results (per resource: `cache=` there).
    `state_key`: the HMAC key sealing requestState; give every replica the same one.
    `versions`: the protocol versions served (both eras by default).
    `identify`: name the server in every stateless result's `_meta` (2026-07-28: SHOULD).
    `mask_errors`: a tool's unexpected exception reaches the model as a generic message, not its text
    (paths, SQL, secrets); ToolError and MCPError messages are kept. The traceback is logged either way.
    `max_in_flight`: requests of one session (stdio, an HTTP session) handled at once; one more is
    answered with SERVER_BUSY (-32010). `max_worker_threads`: the worker threads one session's sync
    handlers hold at once, so it cannot take the whole pool (anyio's 40). None: no cap.
    `peers`: who is connected, and how far changes fan out: `Peers(max_subscriptions=100,
    max_uri_length=2048)` in one process, a cluster's (`RedisBackplane.peers()`) across workers.
    `tasks`: where tool calls that become tasks are kept and run (a TaskEngine on its store).
    `lifespan(server)`: an async context manager open while it serves: `ctx.lifespan` (lifespan.py).
    `tracing`: an OpenTelemetry span per request and notification, under the client's (tracing.py).
    `visible(auth, kind, item) -> bool`: which items each caller sees (`visibility`, visibility.py).
    """

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
        peers: Peers | None = None,
        tasks: TaskEngine | None = None,
        lifespan: LifespanFactory | None = None,
        tracing: TracingOption = False,
        visible: VisibleFn | None = None,
    ) -> None:
        self.max_in_flight, self.max_worker_threads = max_in_flight, max_worker_threads
        self.versions = versions
        self.identify = identify
        self.client_request_timeout = client_request_timeout
        self.info: JSON = {"name": name, "version": version} | ({"title": title} if title else {})
        self.lifespan = Lifespan(lifespan, self)
        self.middleware = Chain()  # around requests: server/middleware/chain.py
        self.tracing = ServerTracing(tracing) if tracing else None
        if self.tracing is not None:  # the first middleware, so the outermost
            self.middleware.add(self.tracing)
        peers = peers if peers is not None else Peers()
        self.registry = Registry(
            instructions=instructions,
            page_size=page_size,
            logging=logging,
            cache=cache,
            mask_errors=mask_errors,
            on_change=self._changed,
        )
        tasks = tasks if tasks is not None else TaskEngine()
        self.services = Services(self.registry, peers, tasks, StateSealer(state_key, ttl=state_ttl))
        self._roots_changed: list[Callable[[Session], Any]] = []
        if visible is not None:
            install_visibility(self, visible)

    instructions: OnRegistry[str | None] = OnRegistry()
    page_size: OnRegistry[int | None] = OnRegistry()
    logging: OnRegistry[bool] = OnRegistry()
    cache: OnRegistry[CacheHint] = OnRegistry()
    mask_errors: OnRegistry[bool] = OnRegistry()
    tools: OnRegistry[dict[str, Tool]] = OnRegistry()
    resources: OnRegistry[dict[str, Resource]] = OnRegistry()
    templates: OnRegistry[dict[str, ResourceTemplate]] = OnRegistry()
    prompts: OnRegistry[dict[str, Prompt]] = OnRegistry()
    completions: OnRegistry[Completions] = OnRegistry()
    peers: OnServices[Peers] = OnPeers()
    tasks: OnServices[TaskEngine] = OnServices()
    state_sealer: OnServices[StateSealer] = OnServices("sealer")

    # ---- registration ------------------------------------------------------------------------

    def tool(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Register a function as a tool; `options` are `Tool.from_function`'s (server/tools.py)."""
        return registering(functools.partial(self.add_tool, name=name, **options))

    def add_tool(self, tool: Tool | Callable[..., Any], **options: Any) -> Tool:
        """Register `tool`: a `Tool`, or a function made into one by `Tool.from_function(fn, **options)`
        (with this server's context and lifespan types)."""
        if not isinstance(tool, Tool):
            tool = Tool.from_function(tool, **self._injected(options))
        elif options:
            raise TypeError(f"options {sorted(options)} apply to a function, not to a Tool already made")
        return self.registry.add_tool(tool)

    def remove_tool(self, name: str) -> None:
        self.registry.remove_tool(name)

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a reader for a URI, or for an RFC 6570 URI template such as `notes://{id}`;
        `options` are `resource_from`'s (server/resources.py)."""
        return registering(lambda fn: self.add_resource(uri, fn, **options))

    def add_resource(
        self,
        resource: str | Resource | ResourceTemplate,
        fn: Callable[..., Any] | None = None,
        **options: Any,
    ) -> Resource | ResourceTemplate:
        """Register `resource`: a `Resource` or `ResourceTemplate`, or a URI made into one by
        `resource_from(uri, fn, **options)`: a template when it has `{...}` expressions."""
        if isinstance(resource, str):
            resource = resource_from(resource, fn, **self._injected(options))
        elif fn is not None or options:
            raise TypeError("a reader and options apply to a URI, not to a resource already made")
        return self.registry.add_resource(resource)

    def remove_resource(self, uri: str) -> None:
        self.registry.remove_resource(uri)

    def prompt(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Register a function as a prompt; `options` are `Prompt.from_function`'s (server/prompts.py)."""
        return registering(functools.partial(self.add_prompt, name=name, **options))

    def add_prompt(self, prompt: Prompt | Callable[..., Any], **options: Any) -> Prompt:
        """Register `prompt`: a `Prompt`, or a function made into one by `Prompt.from_function`."""
        if not isinstance(prompt, Prompt):
            prompt = Prompt.from_function(prompt, **self._injected(options))
        elif options:
            raise TypeError(f"options {sorted(options)} apply to a function, not to a Prompt already made")
        return self.registry.add_prompt(prompt)

    def remove_prompt(self, name: str) -> None:
        self.registry.remove_prompt(name)

    def _injected(self, options: JSON) -> JSON:
        """`options` with what a function registered here receives by type: the Context, and the value
        of this server's lifespan."""
        return {"context_type": Context, "lifespan_type": self.lifespan.value_type} | options

    def mount(self, child: Server, prefix: str, *, separator: str = "_") -> Mount:
        """Offer `child`'s tools, prompts, resources and completions here under `prefix`: its items
        are kept in step with it, its broadcasts reach this server's clients (server/mount.py)."""
        mount = Mount(self.registry, self.peers, child.registry, prefix, separator)
        limits = child.peers.max_subscriptions, child.peers.max_uri_length
        child.peers = MountedPeers(mount, max_subscriptions=limits[0], max_uri_length=limits[1])
        return mount

    def visibility(self, fn: VisibleFn) -> VisibleFn:
        """`visible=` given later, or as a decorator: which items each caller sees (visibility.py)."""
        return install_visibility(self, fn).fn

    def _changed(self, method: str) -> None:
        """What the Registry calls on each change: the peers the Server has now hear it."""
        self.peers.changed(method)

    def extension(self, identifier: str, settings: JSON | None = None, **options: Any) -> Extension:
        """Declare extension `identifier` (once) and serve its methods (server/extensions.py)."""
        found = self.registry.extensions.get(identifier)
        return found or self.registry.add_extension(Extension(identifier, settings, **options))

    def skill(self, path: str | os.PathLike[str], **options: Any) -> Skill:
        """Serve the skill directory at `path` under the skills extension (server/skills.py)."""
        return add_skill(self.registry, path, **options)

    def completion(
        self, *, prompt: str | None = None, template: str | None = None, argument: str
    ) -> Callable[[F], F]:
        """Register `fn(value, context_arguments) -> list[str]` completing one argument."""
        return registering(functools.partial(self.completions.add, prompt, template, argument))

    def capabilities(self) -> JSON:
        return self.registry.capabilities()

    async def notify_resource_updated(self, uri: str) -> None:
        """notifications/resources/updated to every session subscribed to `uri`."""
        await self.peers.resource_updated(uri)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """A log message to every session whose level lets it through."""
        await self.peers.log(level, data, logger)

    # ---- serving -----------------------------------------------------------------------------

    def connection(self, request_ids: Iterator[RequestId] | None = None) -> Connection:
        connection = Connection(
            Role.SERVER,
            info=self.info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
            versions=self.versions,
            request_ids=request_ids,
        )
        connection.server_info_in_results = self.identify
        connection.extension_rules = self.registry.extension_rules()
        return connection

    async def serve(self, stream: MessageStream) -> None:
        """Serve one peer over `stream` until it closes."""
        session = Session(
            self.connection(stream.extra(StreamAttribute.request_ids, None)),
            stream,
            self._on_request,
            self._on_notification,
            max_in_flight=self.max_in_flight,
            max_worker_threads=self.max_worker_threads,
        )
        async with self.lifespan.running():
            with self.peers.connected(session):
                await session.run()

    def on_roots_changed(self, fn: Callable[[Session], Any]) -> Callable[[Session], Any]:
        """Register `fn(session)` (sync or async), called on notifications/roots/list_changed."""
        self._roots_changed.append(fn)
        return fn

    async def _on_notification(self, session: Session, note: ev.NotificationReceived) -> None:
        notified = functools.partial(self._notified, session, note)
        await (
            notified()
            if self.tracing is None
            else self.tracing.notification(note.method, note.params, notified)
        )

    async def _notified(self, session: Session, note: ev.NotificationReceived) -> None:
        if note.method == "notifications/roots/list_changed":
            for fn in self._roots_changed:
                outcome = fn(session)
                if inspect.isawaitable(outcome):
                    await outcome

    async def _on_request(self, session: Session, request: ev.RequestReceived) -> JSON:
        handler = handler_for(request.method)
        params, meta = request.params, request.params.get("_meta")
        agreement, origin = request.negotiated, RECEIVED_FROM.get()
        shows = self.services.viewing(session, origin)  # whom it speaks for, and what that one sees
        if origin is not None and origin.auth is not None:  # a protected server: the item's scopes
            require(
                self.registry.scopes_for(request.method, params, shows), origin.auth.scopes, request.method
            )
        asker = asker_for(
            session,
            request.id,
            request.method,
            params,
            agreement,
            sealer=self.services.sealer,
            timeout=self.client_request_timeout,
            principal=origin.principal if origin is not None else None,
        )
        ctx = Context(
            self.registry,
            session,
            request.id,
            agreement,
            asker,
            meta=meta if isinstance(meta, dict) else None,
            server=self,
            origin=origin,
        )
        try:
            if self.middleware.entries:  # a list's truth, no call: free when unused
                call = functools.partial(handler, self.services, ctx)
                return await self.middleware.run(ctx, request.method, params, call)
            return await handler(self.services, ctx, params)
        except InputRequired as need:
            assert isinstance(asker, RoundTrip)  # only a round trip raises it
            return asker.result(need)

    def scopes_for(self, method: str, params: JSON, auth: Viewer = None) -> frozenset[str]:
        """The scopes a request's token must grant: those of the item it names (Streamable HTTP refuses a
        request without them as 403 insufficient_scope, before dispatch); with a visibility hook, only of
        an item the holder of `auth` sees: a hidden item's would tell it exists (it is unknown)."""
        return self.registry.scopes_for(method, params, self.services.shows_to(auth))

    def mirrored_headers(self, tool: str) -> list[tuple[str, tuple[str, ...]]]:
        """The `x-mcp-header` parameters of `tool` (Streamable HTTP checks them against the body); with
        a visibility hook none, as a hidden tool's would tell it exists (dispatch checks them)."""
        return self.registry.mirrored_headers(tool, self.services.unknown_caller())

    def run(self, *, max_line: int | None = None, eof_grace: float | None = None) -> None:
        """Serve over stdio until stdin closes or SIGTERM (what `python server.py` should call); after
        stdin closes, requests already read get `eof_grace` seconds (default 5) to be answered."""
        from ..transports.stdio import run_stdio

        named = (("max_line", max_line), ("eof_grace", eof_grace))
        run_stdio(self.serve, **{k: v for k, v in named if v is not None})
        leave_if_threads_linger()
