"""What a handler can do while it answers one request: log, report progress, and ask the client.

Each call checks what the client declared before anything is sent (a CapabilityError otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..content import text
from ..protocol.errors import INVALID_PARAMS, InvalidParams, LocalError, RemoteError
from ..protocol.jsonrpc import JSON, RequestId
from ..protocol.lifecycle import Negotiated
from ..protocol.schema_check import compile_schema, schema_problems
from ..protocol.versions import Feature, has, is_stateless
from .asking import Asker
from .request import RequestContext
from .tasks.hosted_by_client import ask_as_task

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken
    from ..runtime.origin import Origin
    from ..runtime.session import Session
    from .lifespan import Lifespan

__all__ = ["Context", "Elicited", "ServerHandle"]

F = TypeVar("F", bound=Callable[..., Any])


class ServerHandle(Protocol):
    """What `ctx.server` offers a user's handler: the Server serving the request, as far as a handler
    needs it (it has more)."""

    async def notify_resource_updated(self, uri: str) -> None: ...

    async def log(self, level: str, data: Any, logger: str | None = None) -> None: ...

    def tool(self, name: str | None = None, **options: Any) -> Callable[[F], F]: ...

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]: ...

    def prompt(self, name: str | None = None, **options: Any) -> Callable[[F], F]: ...

    def remove_tool(self, name: str) -> None: ...

    def remove_resource(self, uri: str) -> None: ...

    def remove_prompt(self, name: str) -> None: ...

    @property
    def lifespan(self) -> Lifespan: ...


class OwnResources(Protocol):
    """What a Context reads its own server's resources through (the Registry)."""

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JSON]: ...


@dataclass(frozen=True, slots=True)
class Elicited:
    """The user's answer: `action` is "accept", "decline" or "cancel"; `content` only on accept. When
    elicit() was given a pydantic model class, an accepted answer is also `value`, that model validated
    (its defaults filled in, as they are in `content`)."""

    action: str
    content: JSON | None
    value: Any = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


class Context:
    """Handed to a handler that declares a parameter of this type."""

    __slots__ = ("_server", "asker", "meta", "negotiated", "origin", "registry", "request_id", "session")

    def __init__(
        self,
        registry: OwnResources,
        session: Session,
        request_id: RequestId,
        negotiated: Negotiated,
        asker: Asker,
        *,
        meta: JSON | None = None,
        server: ServerHandle | None = None,
        origin: Origin | None = None,
    ) -> None:
        """`negotiated`: the agreement this request is served under (a stateless request carries its
        own); `asker`: how this request reaches the client (asking.asker_for chooses); `origin`: what
        the transport knew of the request (None over stdio)."""
        self.registry = registry
        self.session = session
        self.request_id = request_id
        self.negotiated = negotiated
        self.asker = asker
        self.meta: JSON = meta or {}  # the request's `_meta`, untouched
        self._server = server
        self.origin = origin

    @property
    def server(self) -> ServerHandle:
        """The Server answering this request."""
        if self._server is None:
            raise LocalError("this Context was made without a Server")
        return self._server

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded (`Server(lifespan=...)`): a pool, a client, a config."""
        return self.server.lifespan.value

    @property
    def stateless(self) -> bool:
        """Whether this request is served in the stateless era (2026-07-28)."""
        return is_stateless(self.negotiated.version)

    @property
    def client_capabilities(self) -> JSON:
        return self.negotiated.client_capabilities

    @property
    def client_info(self) -> JSON:
        """The client's `clientInfo` (from initialize, or a stateless request's `_meta`)."""
        return self.negotiated.client_info

    @property
    def auth(self) -> AccessToken | None:
        """The access token this request was authorized with (a server behind mcpkit.auth.protect),
        or None: who it speaks for (`subject`, `client_id`) and what it allows (`scopes`)."""
        return self.origin.auth if self.origin is not None else None

    @property
    def request_headers(self) -> Mapping[str, str] | None:
        """The HTTP request's headers (names lower-cased), or None when not served over HTTP."""
        return self.origin.headers if self.origin is not None else None

    @property
    def session_id(self) -> str | None:
        """The Streamable HTTP session (Mcp-Session-Id) the request belongs to, if any."""
        return self.origin.session_id if self.origin is not None else None

    @property
    def cancelled(self) -> bool:
        return self.session.connection.is_cancelled(self.request_id)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send progress if the client asked for it (a progressToken); otherwise do nothing."""
        if message is not None and not has(self.negotiated.version, Feature.PROGRESS_MESSAGE):
            message = None
        note = self.session.connection.progress(self.request_id, progress, total, message)
        await self.session.send_message(note, self.request_id)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """notifications/message, unless the client's level (logging/setLevel or the request's
        `_meta` logLevel) filters it out."""
        note = self.session.connection.log(level, data, logger, self.request_id)
        await self.session.send_message(note, self.request_id)

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)

    async def as_task(self) -> None:
        """From here on the call runs as a task, for a tool registered with `task=..., ask_first=True`
        and called by a client with the tasks extension: what it asked so far was asked inside the
        request; the client now gets the task's id. Elsewhere it does nothing."""

    async def request_input(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        """Ask the client several things at once: key -> {"method", "params"}; key -> its result.

        Stateless era: one input-required round carries every unanswered request. Handshake era:
        the requests go to the client concurrently.
        """
        return await self.asker.ask_many(requests)

    async def sample(
        self,
        messages: str | Sequence[JSON | str],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        model_preferences: JSON | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        include_context: str | None = None,
        tools: list[JSON] | None = None,
        tool_choice: JSON | None = None,
        metadata: JSON | None = None,
        key: str | None = None,
        as_task: bool | int = False,
    ) -> JSON:
        """sampling/createMessage; `tools` need the client's `sampling.tools` (2025-11-25). `as_task`
        (True, or a ttl in ms): run as a task the client hosts, where it declared it can (2025-11-25)."""
        items = [messages] if isinstance(messages, str) else list(messages)
        wire = [{"role": "user", "content": text(m)} if isinstance(m, str) else m for m in items]
        params: JSON = {"messages": wire, "maxTokens": max_tokens}
        optional = (
            ("systemPrompt", system_prompt),
            ("modelPreferences", model_preferences),
            ("temperature", temperature),
            ("stopSequences", stop_sequences),
            ("includeContext", include_context),
            ("tools", tools),
            ("toolChoice", tool_choice),
            ("metadata", metadata),
        )
        params.update((key, value) for key, value in optional if value is not None)
        if (tools or tool_choice) and not has(self.negotiated.version, Feature.SAMPLING_TOOLS):
            raise InvalidParams(f"tools in sampling need protocol 2025-11-25, not {self.negotiated.version}")
        result = await ask_as_task(
            self.asker, self.negotiated, "sampling/createMessage", params, key, as_task
        )
        if not isinstance(result.get("role"), str) or not isinstance(result.get("content"), dict | list):
            raise RemoteError(
                INVALID_PARAMS, "The client answered sampling/createMessage without a role and content"
            )
        return result

    async def elicit(
        self, message: str, schema: JSON | type, *, key: str | None = None, as_task: bool | int = False
    ) -> Elicited:
        """Form-mode elicitation; an accepted answer is checked against the requested schema.

        `key` names the ask in a stateless round trip (default: counted per kind); `as_task` as in `sample`.
        """
        requested = _requested_schema(schema)
        params = {"message": message, "requestedSchema": requested}
        result = await ask_as_task(self.asker, self.negotiated, "elicitation/create", params, key, as_task)
        action = result.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise RemoteError(INVALID_PARAMS, f"The client answered elicitation with action {action!r}")
        content = result.get("content") if action == "accept" else None
        if action == "accept":
            problems = schema_problems(compile_schema(requested), content if content is not None else {})
            if problems:
                raise RemoteError(
                    INVALID_PARAMS, f"The elicitation answer breaks the requested schema: {problems[0]}"
                )
            if not isinstance(schema, dict):
                value = _as_model(schema, content or {})
                return Elicited(action, value.model_dump(mode="json"), value)
        return Elicited(action, content)

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> Elicited:
        """URL-mode elicitation (2025-11-25): the user completes it out of band at `url`."""
        if not has(self.negotiated.version, Feature.URL_ELICITATION):
            raise InvalidParams(f"URL elicitation needs protocol 2025-11-25, not {self.negotiated.version}")
        params = {"mode": "url", "message": message, "url": url}
        # 2026-07-28 dropped elicitationId: the retry itself tells the server the user is back.
        if has(self.negotiated.version, Feature.ELICITATION_COMPLETE):
            params["elicitationId"] = elicitation_id
        result = await self.asker.ask("elicitation/create", params, f"url-{elicitation_id}")
        return Elicited(str(result.get("action")), None)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """notifications/elicitation/complete for a URL elicitation that finished (2025-11-25 only)."""
        if not has(self.negotiated.version, Feature.ELICITATION_COMPLETE):
            return  # nothing to send: the client learns the outcome by retrying
        params = {"elicitationId": elicitation_id}
        await self.session.notify("notifications/elicitation/complete", params, self.request_id)

    async def list_roots(self, *, key: str | None = None) -> list[JSON]:
        result = await self.asker.ask("roots/list", {}, key)
        roots = result.get("roots")
        return roots if isinstance(roots, list) else []

    async def read_resource(self, uri: str) -> list[JSON]:
        """Read one of this server's own resources."""
        return await self.registry.read_resource(uri, self)


def _as_model(model: Any, content: JSON) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(content)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the answer"
        raise RemoteError(
            INVALID_PARAMS, f"The elicitation answer is refused: {where}: {first['msg']}"
        ) from None


def _requested_schema(schema: JSON | type) -> JSON:
    if isinstance(schema, dict):
        return schema
    model_json_schema = getattr(schema, "model_json_schema", None)
    if model_json_schema is None:
        raise TypeError("elicit() takes a JSON Schema dict or a pydantic model class")
    raw: JSON = model_json_schema()
    properties = {
        k: {key: v for key, v in p.items() if key != "title"} for k, p in raw.get("properties", {}).items()
    }
    out: JSON = {"type": "object", "properties": properties}
    if raw.get("required"):
        out["required"] = raw["required"]
    return out
