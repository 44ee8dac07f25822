"""The high-level Client: typed calls to a server, and handlers for what the server may ask."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

from ..protocol import events as ev
from ..protocol.capabilities import Role
from ..protocol.connection import Connection
from ..protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, MCPError, RemoteError
from ..protocol.schema_check import compile_schema, schema_problems
from ..protocol.versions import LATEST, SUPPORTED_VERSIONS
from ..runtime.groups import single_error
from ..runtime.session import ProgressCallback, Session
from ..runtime.stream import MessageStream
from .handlers import check_elicitation_answer

__all__ = ["Client", "connect_http", "connect_stdio"]

JSON = dict[str, Any]
Handler = Callable[[JSON], Awaitable[JSON] | JSON]
NotificationCallback = Callable[[str, JSON], Awaitable[None] | None]


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Client:
    """A client connected to one server over `stream`; use as `async with Client(stream) as client`."""

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
        roots: list[JSON] | Callable[[], Awaitable[list[JSON]] | list[JSON]] | None = None,
        on_log: Callable[[JSON], Awaitable[None] | None] | None = None,
        on_notification: NotificationCallback | None = None,
        timeout: float | None = 60.0,
        max_timeout: float | None = None,
        protocol_version: str = LATEST,
        versions: tuple[str, ...] = SUPPORTED_VERSIONS,
    ) -> None:
        self.stream = stream
        self._sampling, self._elicitation, self._roots = sampling, elicitation, roots
        self._on_log, self._on_notification = on_log, on_notification
        self.timeout, self.max_timeout = timeout, max_timeout
        self.protocol_version = protocol_version
        caps: JSON = {}
        if sampling is not None:
            caps["sampling"] = {"tools": {}} if sampling_tools else {}
        if elicitation is not None:
            caps["elicitation"] = {"form": {}, "url": {}} if elicitation_url else {"form": {}}
        if roots is not None:
            caps["roots"] = {"listChanged": True}
        connection = Connection(
            Role.CLIENT, info={"name": name, "version": version}, capabilities=caps, versions=versions
        )
        self.session = Session(connection, stream, self._on_request, self._on_incoming_notification)
        self._output_validators: dict[str, Any] = {}
        self._stack: AsyncExitStack | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        stack = AsyncExitStack()
        stack.enter_context(single_error())
        tg = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tg.cancel_scope.cancel)
        tg.start_soon(self.session.run)
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
        await self.session.initialize(self.protocol_version, self.timeout)

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
    ) -> JSON:
        return await self.session.request(
            method,
            params,
            timeout=timeout if timeout is not None else self.timeout,
            max_timeout=self.max_timeout,
            on_progress=on_progress,
        )

    async def ping(self) -> None:
        await self.request("ping")

    async def list_tools(self, cursor: str | None = None) -> JSON:
        result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
        for tool in result.get("tools", []):
            schema = tool.get("outputSchema")
            if isinstance(schema, dict) and isinstance(tool.get("name"), str):
                self._output_validators[tool["name"]] = compile_schema(schema)
        return result

    async def _all(self, method: str, key: str) -> list[JSON]:
        items: list[JSON] = []
        cursor: str | None = None
        while True:
            if method == "tools/list":
                page = await self.list_tools(cursor)
            else:
                page = await self.request(method, {"cursor": cursor} if cursor else None)
            items.extend(page.get(key, []))
            cursor = page.get("nextCursor")
            if not cursor:
                return items

    async def list_all_tools(self) -> list[JSON]:
        return await self._all("tools/list", "tools")

    async def call_tool(
        self,
        name: str,
        arguments: JSON | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> JSON:
        """tools/call; a result's structuredContent is checked against the tool's outputSchema."""
        params: JSON = {"name": name, "arguments": arguments or {}}
        result = await self.request("tools/call", params, on_progress=on_progress, timeout=timeout)
        validator = self._output_validators.get(name)
        if validator is not None and not result.get("isError"):
            if "structuredContent" not in result:
                raise RemoteError(
                    INVALID_PARAMS, f"Tool {name!r} has an outputSchema but returned no structuredContent"
                )
            problems = schema_problems(validator, result["structuredContent"])
            if problems:
                raise RemoteError(
                    INVALID_PARAMS,
                    f"Tool {name!r} returned structuredContent that breaks its outputSchema: {problems[0]}",
                )
        return result

    async def list_resources(self, cursor: str | None = None) -> JSON:
        return await self.request("resources/list", {"cursor": cursor} if cursor else None)

    async def list_all_resources(self) -> list[JSON]:
        return await self._all("resources/list", "resources")

    async def list_resource_templates(self, cursor: str | None = None) -> JSON:
        return await self.request("resources/templates/list", {"cursor": cursor} if cursor else None)

    async def list_all_resource_templates(self) -> list[JSON]:
        return await self._all("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> JSON:
        return await self.request("resources/read", {"uri": uri})

    async def subscribe(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self, cursor: str | None = None) -> JSON:
        return await self.request("prompts/list", {"cursor": cursor} if cursor else None)

    async def list_all_prompts(self) -> list[JSON]:
        return await self._all("prompts/list", "prompts")

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
        await self.request("logging/setLevel", {"level": level})

    async def roots_changed(self) -> None:
        """notifications/roots/list_changed, after the roots the client offers have changed."""
        await self.session.notify("notifications/roots/list_changed")

    # ---- what the server asks ----------------------------------------------------------------

    async def _on_request(self, session: Session, request: ev.RequestReceived) -> JSON:
        method, params = request.method, request.params
        if method == "roots/list":
            roots = self._roots() if callable(self._roots) else self._roots
            return {"roots": list(await _maybe_await(roots) or [])}
        handler = self._sampling if method == "sampling/createMessage" else self._elicitation
        if handler is None or method not in ("sampling/createMessage", "elicitation/create"):
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method!r}")
        result: JSON = await _maybe_await(handler(params))
        if method == "elicitation/create":
            check_elicitation_answer(params, result)
        return result

    async def _on_incoming_notification(self, session: Session, note: ev.NotificationReceived) -> None:
        if note.method == "notifications/message" and self._on_log is not None:
            await _maybe_await(self._on_log(note.params))
        if note.method == "notifications/tools/list_changed":
            self._output_validators.clear()
        if self._on_notification is not None:
            await _maybe_await(self._on_notification(note.method, note.params))


@asynccontextmanager
async def connect_stdio(command: list[str], **options: Any) -> AsyncIterator[Client]:
    """Spawn `command` as a stdio server and connect a Client to it."""
    from ..transports.stdio import spawn

    spawn_keys = {"env", "cwd", "stderr", "max_line", "shutdown_timeout"}
    spawn_options = {k: options.pop(k) for k in list(options) if k in spawn_keys}
    with single_error():
        async with spawn(command, **spawn_options) as stream, Client(stream, **options) as client:
            yield client


_HTTP_STREAM_OPTIONS = frozenset(
    {"max_message", "reconnect_attempts", "reconnect_on_404", "retry_ms", "legacy_fallback"}
)


@asynccontextmanager
async def connect_http(
    url: str, *, headers: dict[str, str] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """Connect a Client to a Streamable HTTP server at `url` (or a 2024-11-05 HTTP+SSE one).

    Transport options (see `open_http_stream`): max_message, reconnect_attempts,
    reconnect_on_404, retry_ms, legacy_fallback; the rest go to `Client`.
    """
    from ..transports.http_client import open_http_stream

    timeout = options.get("timeout") or 30.0
    stream_options = {k: options.pop(k) for k in list(options) if k in _HTTP_STREAM_OPTIONS}
    with single_error():
        async with (
            open_http_stream(url, headers=headers, timeout=timeout, **stream_options) as stream,
            Client(stream, **options) as c,
        ):
            yield c
