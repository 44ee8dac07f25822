"""Checks the client applies to its own answers before they go back to the server."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.errors import InvalidParams, MethodNotFound
from ..protocol.extensions import with_extensions
from ..protocol.jsonrpc import JSON, RequestId
from ..protocol.schema_check import compile_schema, schema_problems
from ..runtime.origin import RECEIVED_FROM

__all__ = [
    "Handler",
    "answer_server",
    "asked_in",
    "capabilities_for",
    "check_elicitation_answer",
    "maybe_await",
]


async def maybe_await(value: Any) -> Any:
    """What a user's callback returned, awaited if it is awaitable (sync or async callbacks alike)."""
    return await value if inspect.isawaitable(value) else value


def check_elicitation_answer(params: dict[str, Any], result: dict[str, Any]) -> None:
    """elicitation "Form Mode": accepted content must match requestedSchema (the client validates too)."""
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise InvalidParams(f"elicitation answer has invalid action {action!r}")
    schema = params.get("requestedSchema")
    if action != "accept" or params.get("mode") == "url" or not isinstance(schema, dict):
        return
    problems = schema_problems(compile_schema(schema), result.get("content", {}))
    if problems:
        raise InvalidParams(f"elicitation answer breaks requestedSchema: {problems[0]}")


Handler = Callable[[JSON], Awaitable[JSON] | JSON]  # a sampling or elicitation handler


def asked_in() -> RequestId | None:
    """In a handler of a server's request: the id of our request it came with, where the transport
    tells (Streamable HTTP: it came on that request's response stream); None over stdio."""
    origin = RECEIVED_FROM.get()
    return origin.answering if origin is not None else None


def capabilities_for(
    sampling: Handler | None,
    sampling_tools: bool,
    elicitation: Handler | None,
    url: bool,
    roots: object,
    extensions: dict[str, JSON] | None = None,
) -> JSON:
    """The client capabilities the handlers given to a Client call for (`roots`: given or None), and
    the extensions it declares (SEP-2133; client/extensions.py): ValueError for a malformed identifier."""
    caps: JSON = with_extensions({}, extensions or {})
    if sampling is not None:
        caps["sampling"] = {"tools": {}} if sampling_tools else {}
    if elicitation is not None:
        caps["elicitation"] = {"form": {}, "url": {}} if url else {"form": {}}
    if roots is not None:
        caps["roots"] = {"listChanged": True}
    return caps


Roots = list[JSON] | Callable[[], Awaitable[list[JSON]] | list[JSON]]


async def answer_server(
    method: str, params: JSON, sampling: Handler | None, elicitation: Handler | None, roots: Roots | None
) -> JSON:
    """What a client with these handlers answers a server's sampling, elicitation or roots request with.
    A `task` field asks for a task this answer does not make: ignored (tasks "Task Support and Handling")."""
    if "task" in params:
        params = {k: v for k, v in params.items() if k != "task"}
    if method == "roots/list" and roots is not None:
        found = roots() if callable(roots) else roots
        return {"roots": list(await maybe_await(found) or [])}
    handler = sampling if method == "sampling/createMessage" else elicitation
    if handler is None or method not in ("sampling/createMessage", "elicitation/create"):
        raise MethodNotFound(f"Method not found: {method!r}")
    result: JSON = await maybe_await(handler(params))
    if method == "elicitation/create":
        check_elicitation_answer(params, result)
    return result
