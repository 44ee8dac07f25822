"""Resources and resource templates: definitions, and reading a URI into its contents.

Spec: server "Resources". Text contents carry `text`, binary contents a base64 `blob`; a URI no
resource or template answers is -32002 with the URI in `data` (2024-11-05 .. 2025-11-25).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.errors import RESOURCE_NOT_FOUND, MCPError
from ..protocol.jsonrpc import JSON
from .caching import CacheHint
from .common_fields import add_common_fields
from .context import Context
from .invoke import invoke
from .request import RequestContext
from .signature import ArgumentError, Signature, inspect_function

if TYPE_CHECKING:  # imported when the first template is compiled: its regexes cost ~5 ms at start
    from .uri_template import UriTemplate

__all__ = ["Resource", "ResourceTemplate", "not_found", "resource_from", "to_contents"]

log = logging.getLogger("mcpkit")


def not_found(uri: str) -> MCPError:
    return MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


@dataclass(eq=False, slots=True)
class _Described:
    name: str
    title: str | None
    description: str | None
    mime_type: str | None
    annotations: JSON | None
    icons: list[JSON] | None
    meta: JSON | None
    size: int | None
    cache: CacheHint | None = field(default=None, kw_only=True)  # stateless read results' hint
    scopes: frozenset[str] = field(default=frozenset(), kw_only=True)  # a reader's token must grant

    def _describe(self, out: JSON, version: str) -> JSON:
        for key, value in (
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
        ):
            if value is not None:
                out[key] = value
        if self.annotations:
            out["annotations"] = self.annotations
        return add_common_fields(out, version, title=self.title, icons=self.icons, meta=self.meta)


@dataclass(eq=False, slots=True)
class Resource(_Described):
    uri: str
    read_fn: Callable[..., Any] | None
    signature: Signature | None
    content: Any = None

    @classmethod
    def compile(
        cls,
        uri: str,
        fn: Callable[..., Any] | None,
        content: Any,
        context_type: type,
        lifespan_type: type | None = None,
        **describe: Any,
    ) -> Resource:
        sig: Signature | None = None
        if fn is not None:
            sig = inspect_function(
                fn, context_type=context_type, structured_output=False, lifespan_type=lifespan_type
            )
        return cls(uri=uri, read_fn=fn, signature=sig, content=content, **describe)

    def definition(self, version: str) -> JSON:
        return self._describe({"uri": self.uri, "name": self.name}, version)

    async def read(self, context: RequestContext) -> list[JSON]:
        if self.read_fn is None:
            return to_contents(self.uri, self.content, self.mime_type)
        assert self.signature is not None
        kwargs: JSON = {self.signature.context_param: context} if self.signature.context_param else {}
        value = await invoke(
            self.read_fn, kwargs, self.signature.is_async, self.signature.dependencies, context
        )
        return to_contents(self.uri, value, self.mime_type)


@dataclass(eq=False, slots=True)
class ResourceTemplate(_Described):
    """A reader for every URI a template matches.

    A value with a `..` segment, an absolute path or NUL is refused as not found unless
    `allow_traversal` is set; so is a value that does not fit the reader's parameter type.
    """

    template: UriTemplate
    read_fn: Callable[..., Any]
    signature: Signature
    allow_traversal: bool = field(default=False, kw_only=True)

    @classmethod
    def compile(
        cls,
        uri_template: str,
        fn: Callable[..., Any],
        context_type: type,
        lifespan_type: type | None = None,
        **describe: Any,
    ) -> ResourceTemplate:
        from .uri_template import UriTemplate

        template = UriTemplate(uri_template)
        sig = inspect_function(
            fn, context_type=context_type, structured_output=False, lifespan_type=lifespan_type
        )
        unknown = set(sig.input_schema.get("required", ())) - set(template.variables)
        if unknown:
            raise TypeError(f"{uri_template!r} has no variables for required parameters {sorted(unknown)}")
        return cls(template=template, read_fn=fn, signature=sig, **describe)

    def definition(self, version: str) -> JSON:
        return self._describe({"uriTemplate": self.template.template, "name": self.name}, version)

    def arguments(self, uri: str) -> JSON | None:
        """The reader's keyword arguments for `uri`, or None when this template does not serve it."""
        from .uri_template import escapes

        values = self.template.match(uri)
        if values is None:
            return None
        if not self.allow_traversal and (why := escapes(values)) is not None:
            log.info("refused %s for template %s: %s", uri, self.template, why)
            return None
        try:
            return self.signature.bind(values)
        except ArgumentError:
            return None  # `notes://abc` is no note of `notes://{id}` with an int id

    async def read(self, uri: str, context: RequestContext) -> list[JSON] | None:
        """The contents for `uri`, or None if the template does not serve it."""
        kwargs = self.arguments(uri)
        if kwargs is None:
            return None
        if self.signature.context_param:
            kwargs[self.signature.context_param] = context
        value = await invoke(
            self.read_fn, kwargs, self.signature.is_async, self.signature.dependencies, context
        )
        return to_contents(uri, value, self.mime_type)


def resource_from(
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
    scopes: Iterable[str] = (),
    context_type: type = Context,
    lifespan_type: type | None = None,
) -> Resource | ResourceTemplate:
    """A template when `uri` has `{...}` expressions (and `fn` reads it), else a resource of fixed URI,
    read by `fn` or holding `content`.

    A template refuses, as not found, values with a `..` segment, an absolute path or NUL (`%2F`
    decodes into a simple `{var}` too); `allow_traversal=True` hands them to the reader. `scopes`: what
    a reader's access token must grant. `cache`: the hint on its stateless read results.
    """
    if fn is None and content is None:
        raise TypeError("a resource needs a reader function or content")
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
        "scopes": frozenset(scopes),
    }
    from .uri_template import UriTemplate  # ~5 ms to import: only once a resource is registered

    if fn is not None and UriTemplate.is_template(uri):
        return ResourceTemplate.compile(
            uri, fn, context_type, lifespan_type, allow_traversal=allow_traversal, **described
        )
    if allow_traversal:
        raise TypeError("allow_traversal applies to URI templates only")
    return Resource.compile(uri, fn, content, context_type, lifespan_type, **described)


def to_contents(uri: str, value: Any, mime_type: str | None) -> list[JSON]:
    """ResourceContents from what a reader returned: str, bytes, a contents dict, or a list of those."""
    if isinstance(value, list):
        return [item for v in value for item in to_contents(uri, v, mime_type)]
    if isinstance(value, dict) and ("text" in value or "blob" in value):
        return [{"uri": uri, **({"mimeType": mime_type} if mime_type else {}), **value}]
    if isinstance(value, bytes | bytearray):
        blob = base64.b64encode(value).decode("ascii")
        return [{"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}]
    if value is None:
        raise not_found(uri)
    if not isinstance(value, str):
        return [
            {"uri": uri, "mimeType": mime_type or "application/json", "text": orjson.dumps(value).decode()}
        ]
    return [{"uri": uri, "mimeType": mime_type or "text/plain", "text": value}]
