"""Tools: a registered function, its wire definition, and turning a call into a CallToolResult.

Spec: server "Tools". Failures while running a tool, and (from 2025-11-25) arguments that break the
input schema, are results with `isError: true` so the model can see and correct them.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import orjson

from ..content import text
from ..protocol.errors import InvalidParams, LocalError, MCPError, RemoteError
from ..protocol.jsonrpc import JSON
from ..protocol.schema_check import compile_schema, schema_problems
from ..protocol.versions import Feature, has
from .common_fields import add_common_fields
from .context import Context
from .depends import Dependencies
from .invoke import invoke
from .request import RequestContext
from .round_trip import InputRequired
from .signature import ArgumentError, Signature, describe, inspect_function
from .tasks.legs import task_support

__all__ = ["Tool", "ToolError", "tool_annotations"]

log = logging.getLogger("mcpkit")


class ToolError(Exception):
    """Raise inside a tool to return `isError: true` with this message (no traceback is logged)."""


def tool_annotations(
    *,
    title: str | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
) -> JSON | None:
    """The ToolAnnotations object; hints only, never to be trusted by clients for security."""
    pairs = (
        ("title", title),
        ("readOnlyHint", read_only),
        ("destructiveHint", destructive),
        ("idempotentHint", idempotent),
        ("openWorldHint", open_world),
    )
    out = {key: value for key, value in pairs if value is not None}
    return out or None


@dataclass(eq=False, slots=True)
class Tool:
    name: str
    fn: Callable[..., Any]
    description: str | None
    input_schema: JSON
    output_schema: JSON | None
    signature: Signature | None  # None for a tool registered with a raw input schema
    context_param: str | None
    is_async: bool
    dependencies: Dependencies = ()  # injected parameters (depends.py)
    title: str | None = None
    annotations: JSON | None = None
    icons: list[JSON] | None = None
    meta: JSON | None = None
    scopes: frozenset[str] = frozenset()  # what a caller's access token must grant (scopes.py)
    task: str = "forbidden"  # "optional" / "required": may / must run as a task (server/tasks/)
    task_ask_first: bool = False  # asks inside the request until ctx.as_task()
    _validator: Any = None
    _output_validator: Any = None

    @classmethod
    def from_function(
        cls,
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
        scopes: Iterable[str] = (),
        task: bool | str = False,
        ask_first: bool = False,
        context_type: type = Context,
        lifespan_type: type | None = None,
    ) -> Tool:
        """The tool `fn` is: its name, docstring and type hints unless given. `read_only`, `destructive`,
        `idempotent`, `open_world`: its annotations (hints to the client). `scopes`: what a caller's
        access token must grant (on a server behind mcpkit.auth.protect); a caller without them neither
        sees nor may call it. `task`: True (or "optional") or "required": a call by a client with the
        tasks extension becomes a task (server/tasks/); `ask_first`: it asks inside the request until
        `ctx.as_task()`. A parameter of `lifespan_type` receives the server's lifespan value (a Server
        passes its own when it makes the tool)."""
        fields: JSON = {
            "title": title,
            "annotations": tool_annotations(
                read_only=read_only, destructive=destructive, idempotent=idempotent, open_world=open_world
            ),
            "icons": icons,
            "meta": meta,
            "scopes": frozenset(scopes),
            "task": task_support(task),
            "task_ask_first": ask_first,
        }
        tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
        doc = description if description is not None else describe(fn)
        signature_of = functools.partial(
            inspect_function, fn, context_type=context_type, lifespan_type=lifespan_type
        )
        schemas = (input_schema, output_schema, structured_output)
        return cls._compiled(tool_name, fn, doc, signature_of, schemas, fields)

    @classmethod
    def _compiled(
        cls,
        name: str,
        fn: Callable[..., Any],
        doc: str | None,
        signature_of: Callable[..., Signature],
        schemas: tuple[JSON | None, JSON | None, bool | None],
        extra: JSON,
    ) -> Tool:
        input_schema, output_schema, structured_output = schemas
        extra["_output_validator"] = compile_schema(output_schema) if output_schema else None
        if input_schema is None:
            # An explicit outputSchema (any 2020-12 schema, not only an object) is the contract: the
            # value is checked against it and sent as is, not wrapped the way an inferred one is.
            sig = signature_of(structured_output=False if output_schema is not None else structured_output)
            extra.update(signature=sig, context_param=sig.context_param, is_async=sig.is_async)
            extra["dependencies"] = sig.dependencies
            return cls(name, fn, doc, sig.input_schema, output_schema or sig.output_schema, **extra)
        # A raw-schema tool gets the arguments as keywords; it may take **kwargs.
        try:
            raw: Signature | None = signature_of()
        except TypeError:
            raw = None
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        extra.update(signature=None, is_async=is_async, _validator=compile_schema(input_schema))
        extra.update(context_param=raw and raw.context_param, dependencies=raw.dependencies if raw else ())
        return cls(name, fn, doc, input_schema, output_schema, **extra)

    def definition(self, version: str) -> JSON:
        """The Tool object of tools/list, with only the fields `version` has."""
        out: JSON = {"name": self.name, "inputSchema": self.input_schema}
        if self.description is not None:
            out["description"] = self.description
        if self.output_schema is not None and _structured_in(version, self.output_schema.get("type")):
            out["outputSchema"] = self.output_schema
        if self.annotations and has(version, Feature.TOOL_ANNOTATIONS):
            out["annotations"] = self.annotations
        if self.task != "forbidden" and has(version, Feature.TASKS):
            out["execution"] = {"taskSupport": self.task}
        return add_common_fields(out, version, title=self.title, icons=self.icons, meta=self.meta)

    async def call(
        self, arguments: JSON | None, context: RequestContext, version: str, *, mask_errors: bool = False
    ) -> JSON:
        """The CallToolResult; a failure is `isError: true` with its text, which `mask_errors`
        replaces with a generic one unless the author raised ToolError or MCPError on purpose."""
        try:
            kwargs = self._bind(arguments)
        except ArgumentError as exc:
            if not has(version, Feature.TOOL_ERRORS_AS_RESULTS):
                raise InvalidParams(str(exc)) from None
            return error_result(str(exc))
        if self.context_param is not None:
            kwargs[self.context_param] = context
        try:
            value = await invoke(self.fn, kwargs, self.is_async, self.dependencies, context)
        except InputRequired:
            raise  # a stateless round trip: the server answers input_required
        except (LocalError, RemoteError) as exc:
            # ctx.sample() without the client's sampling, or a failed request to the client:
            # the model should see it.
            return error_result(f"Tool {self.name!r} failed: {exc.message}")
        except (MCPError, anyio.get_cancelled_exc_class()):
            raise
        except ToolError as exc:
            return error_result(str(exc) or type(exc).__name__)
        except Exception as exc:
            log.exception("tool %r failed", self.name)
            why = "an internal error occurred" if mask_errors else str(exc) or type(exc).__name__
            return error_result(f"Tool {self.name!r} failed: {why}")
        return self._result(value, version)

    def _bind(self, arguments: JSON | None) -> JSON:
        if self.signature is not None:
            return self.signature.bind(arguments)
        args = arguments or {}
        problems = schema_problems(self._validator, args)
        if problems:
            raise ArgumentError([{"field": "", "message": p, "type": "schema"} for p in problems])
        return dict(args)

    def _result(self, value: Any, version: str) -> JSON:
        if isinstance(value, dict) and isinstance(value.get("content"), list):
            return value  # already a CallToolResult
        structured_ok = has(version, Feature.STRUCTURED_OUTPUT)
        if self.signature is not None and self.signature.output_schema is not None:
            data = self.signature.structured(value)
            # Content blocks stay blocks; the outputSchema still gets its structuredContent.
            if _is_content(value):
                blocks = to_content(value)
            else:
                blocks = [text(value if isinstance(value, str) else self.signature.dumps(data))]
            result: JSON = {"content": blocks}
            if structured_ok:
                result["structuredContent"] = data
            return result
        if self._output_validator is not None:
            problems = schema_problems(self._output_validator, value)
            if problems:
                return error_result(
                    f"Tool {self.name!r} returned output that breaks its outputSchema: {problems[0]}"
                )
            result = {"content": [text(orjson.dumps(value).decode())]}
            if _structured_in(version, "object" if isinstance(value, dict) else None):
                result["structuredContent"] = value
            return result
        return {"content": to_content(value)}


def _structured_in(version: str, schema_type: object) -> bool:
    """Whether `version` carries structured output of this shape: before 2026-07-28 only an object."""
    if not has(version, Feature.STRUCTURED_OUTPUT):
        return False
    return schema_type == "object" or has(version, Feature.ANY_STRUCTURED_CONTENT)


def error_result(message: str) -> JSON:
    return {"content": [text(message)], "isError": True}


_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _CONTENT_TYPES


def _is_content(value: Any) -> bool:
    """A content block, or a non-empty list of them: returned as content whatever the annotation says."""
    if isinstance(value, list | tuple):
        return bool(value) and all(_is_block(v) for v in value)
    return _is_block(value)


def to_content(value: Any) -> list[JSON]:
    """Content blocks for an unstructured return value."""
    if value is None:
        return []
    if isinstance(value, str):
        return [text(value)]
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, dict) and "type" in v for v in value):
        return list(value)
    return [text(orjson.dumps(value, default=str).decode())]
