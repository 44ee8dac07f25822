"""The high-level Client: typed calls to a server, and handlers for what the server may ask."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial

import anyio

from ..protocol import events as ev
from ..protocol.capabilities import Role
from ..protocol.connection import Connection
from ..protocol.errors import LocalError
from ..protocol.jsonrpc import JSON, RequestId
from ..protocol.methods import CACHEABLE
from ..protocol.versions import LATEST, SUPPORTED_VERSIONS
from ..runtime.groups import single_error
from ..runtime.session import ProgressCallback, Session
from ..runtime.stream import MessageStream
from ..runtime.tracing import TracingOption
from .era import Era, remember, remembered, settle
from .handlers import Handler, Roots, answer_server, capabilities_for, maybe_await
from .hosted_tasks import TaskHost
from .output_schemas import OutputSchemas
from .pages import all_pages
from .result_cache import ClientCaches, ResultCache, cache_key
from .round_trips import drive_round_trips
from .subscription import Subscription, Subscriptions, listen_filter
from .tasks import DECLARE_TASKS, TaskHandle, TaskWatch
from .tracing import ClientTracing

__all__ = ["Client"]

NotificationCallback = Callable[[str, JSON], Awaitable[None] | None]
_DEFAULT_ERA = Era.AUTO


def _client_connection(
    name: str, version: str, capabilities: JSON, versions: tuple[str, ...], *, logs: bool
) -> Connection:
    """The client's side of the protocol; in the stateless era it asks for log messages only if `logs`."""
    info = {"name": name, "version": version}
    connection = Connection(Role.CLIENT, info=info, capabilities=capabilities, versions=versions)
    connection.log_level = "debug" if logs else None
    return connection


class Client:
    """A client connected to one server over `stream`; use as `async with Client(stream) as client`.

    `era`: "auto" (the default) probes with server/discover and falls back to initialize
    (remembered per `era_key`), "stateless" pins 2026-07-28, "handshake" pins initialize at
    `protocol_version` (naming a `protocol_version` alone pins the handshake era too).
    `cache`: reuse stateless results for their ttlMs; public ones also go to `shared_cache`.
    `max_rounds`: input-required rounds; `on_task_status`: tasks.TaskWatch; `on_log`: every level
    until set_logging_level; `tracing`: OpenTelemetry; `tasks`: hosted_tasks.TaskHost (2025-11-25).
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        name: str = "mcpkit",
        version: str = "0.1.0",
        sampling: Handler | None = None,
        sampling_tools: bool = False,
        elicitation: Handler | None = None,
        elicitation_url: bool = False,
        roots: Roots | None = None,
        on_log: Callable[[JSON], Awaitable[None] | None] | None = None,
        on_notification: NotificationCallback | None = None,
        on_task_status: Callable[[JSON], Awaitable[None] | None] | None = None,
        timeout: float | None = 60.0,
        max_timeout: float | None = None,
        protocol_version: str | None = None,
        versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        era: Era | str | None = None,
        era_key: str | None = None,
        probe_timeout: float = 10.0,
        cache: bool = True,
        shared_cache: ResultCache | None = None,
        max_rounds: int = 10,
        tracing: TracingOption = False,
        tasks: bool | TaskHost = False,
        extensions: dict[str, JSON] | None = None,
    ) -> None:
        self.stream = stream
        self.protocol_version = protocol_version or LATEST
        self.era = Era(era) if era is not None else Era.HANDSHAKE if protocol_version else _DEFAULT_ERA
        self.era_key = era_key
        self.probe_timeout = probe_timeout
        self.max_rounds = max_rounds
        self.versions = versions
        self.timeout = timeout
        self.max_timeout = max_timeout
        self._caches = ClientCaches(ResultCache(), shared_cache) if cache else ClientCaches(None)
        self._answer = partial(answer_server, sampling=sampling, elicitation=elicitation, roots=roots)
        self._on_log = on_log
        self._on_notification = on_notification
        self.task_watch = TaskWatch(on_task_status)
        caps = capabilities_for(sampling, sampling_tools, elicitation, elicitation_url, roots, extensions)
        self._hosted = TaskHost.declared(tasks, caps, sampling is not None, elicitation is not None)
        connection = _client_connection(name, version, caps, versions, logs=on_log is not None)
        self.session = Session(connection, stream, self._on_request, self._on_incoming_notification)
        self.subscriptions = Subscriptions(self.session)
        self._output_schemas = OutputSchemas()
        self._tracing = ClientTracing(tracing) if tracing else None
        self._stack: AsyncExitStack | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        stack = AsyncExitStack()
        stack.enter_context(single_error())
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)
        tg.start_soon(self.session.run)
        if self._hosted is not None:
            await stack.enter_async_context(self._hosted.running())
        self._stack = stack
        try:
            await self._initialize()
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._stack is not None
        stack, self._stack = self._stack, None
        await stack.aclose()

    async def _initialize(self) -> None:
        era = self.era if self.era is not Era.AUTO else remembered(self.era_key) or Era.AUTO
        found = await settle(
            self.session, era, self.versions, self.protocol_version, self.probe_timeout, self.timeout
        )
        if era is Era.AUTO or found is Era.STATELESS:
            remember(self.era_key, found)

    @property
    def stateless(self) -> bool:
        """Whether this client speaks the 2026-07-28 (stateless) era with its server."""
        negotiated = self.session.connection.negotiated
        return negotiated is not None and negotiated.stateless

    @property
    def server_info(self) -> JSON:
        return self.session.negotiated.server_info

    @property
    def server_capabilities(self) -> JSON:
        return self.session.negotiated.server_capabilities

    @property
    def protocol(self) -> str:
        """The negotiated protocol version."""
        return self.session.negotiated.version

    @property
    def instructions(self) -> str | None:
        return self.session.negotiated.instructions

    # ---- requests ----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> JSON:
        """Send `method`; in the stateless era follow input-required rounds and use the result cache.
        `on_id(id)` learns the id of each request sent for it (a server's request may name it)."""

        async def send(p: JSON | None) -> JSON:
            wait, cap = timeout if timeout is not None else self.timeout, self.max_timeout
            if self._tracing is not None:
                return await self._tracing.request(self.session, method, p, wait, cap, on_progress, on_id)
            return await self.session.request(
                method, p, timeout=wait, max_timeout=cap, on_progress=on_progress, on_id=on_id
            )

        if not self.stateless:
            return await send(params)
        key = cache_key(self.server_info.get("name", ""), method, params) if method in CACHEABLE else None
        cached = self._caches.get(key) if key is not None else None
        if cached is not None:
            return cached
        first = await send(params)
        result = await drive_round_trips(send, self._answer, params or {}, first, self.max_rounds)
        if key is not None:
            self._caches.put(key, result)
        return result

    async def ping(self) -> None:
        """ping; the stateless era has none, so there it is a server/discover round trip."""
        await self.request("server/discover" if self.stateless else "ping")

    async def list_tools(self, cursor: str | None = None) -> JSON:
        result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
        self._output_schemas.learn(result)
        return result

    async def list_all_tools(self) -> list[JSON]:
        return await all_pages(self.list_tools, "tools")

    async def call_tool(
        self,
        name: str,
        arguments: JSON | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> JSON:
        """tools/call; a result's structuredContent is checked against the tool's outputSchema. A
        task the server makes of it (tasks extension) is followed to its end."""
        params: JSON = {"name": name, "arguments": arguments or {}}
        result = await self.request("tools/call", params, on_progress=on_progress, timeout=timeout)
        if result.get("resultType") == "task":
            result = await self._task_handle(result).result()
        self._output_schemas.check(name, result)
        return result

    async def call_tool_as_task(self, name: str, arguments: JSON | None = None) -> TaskHandle:
        """tools/call as a task (2026-07-28: declaring the extension; 2025-11-25: with `task`): the
        handle of the task (`status`, `refresh()`, `result()`, `cancel()`), or of an answer given at once."""
        params: JSON = {"name": name, "arguments": arguments or {}}
        params.update({"_meta": DECLARE_TASKS} if self.stateless else {"task": {}})  # 2025-11-25: task
        return self._task_handle(await self.request("tools/call", params))

    def _task_handle(self, first: JSON) -> TaskHandle:
        return self.task_watch.follow(TaskHandle(self.request, self._answer, first))

    async def list_resources(self, cursor: str | None = None) -> JSON:
        return await self.request("resources/list", {"cursor": cursor} if cursor else None)

    async def list_all_resources(self) -> list[JSON]:
        return await all_pages(self.list_resources, "resources")

    async def list_resource_templates(self, cursor: str | None = None) -> JSON:
        return await self.request("resources/templates/list", {"cursor": cursor} if cursor else None)

    async def list_all_resource_templates(self) -> list[JSON]:
        return await all_pages(self.list_resource_templates, "resourceTemplates")

    async def read_resource(self, uri: str) -> JSON:
        return await self.request("resources/read", {"uri": uri})

    async def subscribe(self, uri: str) -> None:
        if self.stateless:
            raise LocalError("2026-07-28 has no resources/subscribe: use `client.listen(uris=[...])`")
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: list[str] | None = None,
        tasks: list[str] | None = None,
    ) -> AsyncIterator[Subscription]:
        """Change notifications as an async iterator of (method, params), in either era.

        Stateless era: one subscriptions/listen request, cancelled on exit. Handshake era: the
        session's own notifications, with resources/subscribe for `uris`. `tasks`: ids whose status
        notifications to hear (notifications/tasks, the extension declared; notifications/tasks/status).
        """
        subscription = Subscription(listen_filter(tools, prompts, resources, uris or [], tasks))
        if self.stateless:
            opened = self.subscriptions.requested(subscription, self.timeout, declare_tasks=bool(tasks))
        else:
            for uri in uris or []:
                await self.subscribe(uri)
            opened = self.subscriptions.kept(subscription)
        async with opened:
            yield subscription

    async def list_prompts(self, cursor: str | None = None) -> JSON:
        return await self.request("prompts/list", {"cursor": cursor} if cursor else None)

    async def list_all_prompts(self) -> list[JSON]:
        return await all_pages(self.list_prompts, "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> JSON:
        return await self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    async def complete(
        self, ref: JSON, argument: str, value: str, context: dict[str, str] | None = None
    ) -> JSON:
        params: JSON = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = await self.request("completion/complete", params)
        completion = result.get("completion")
        return completion if isinstance(completion, dict) else {"values": []}

    async def set_logging_level(self, level: str) -> None:
        """logging/setLevel; in the stateless era the level rides in each later request's `_meta`."""
        if self.stateless:
            self.session.connection.log_level = level
            return
        await self.request("logging/setLevel", {"level": level})

    async def roots_changed(self) -> None:
        """notifications/roots/list_changed (handshake era); stateless servers ask for roots each time."""
        if not self.stateless:
            await self.session.notify("notifications/roots/list_changed")

    # ---- what the server asks ----------------------------------------------------------------

    async def _on_request(self, session: Session, request: ev.RequestReceived) -> JSON:
        if self._hosted is not None:
            return await self._hosted.answer(request.method, request.params, self._answer)
        return await self._answer(request.method, request.params)

    async def _on_incoming_notification(self, session: Session, note: ev.NotificationReceived) -> None:
        self._caches.invalidate(note.method, note.params)
        await self.task_watch.heard(note.method, note.params)
        if note.method == "notifications/tools/list_changed":
            self._output_schemas.forget()
        if self.subscriptions.route(note):
            return
        if note.method == "notifications/message" and self._on_log is not None:
            await maybe_await(self._on_log(note.params))
        if self._on_notification is not None:
            await maybe_await(self._on_notification(note.method, note.params))
