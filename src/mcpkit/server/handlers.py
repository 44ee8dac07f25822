"""The server's answer to each request method: one function per method, looked up in HANDLERS."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.errors import INVALID_PARAMS, MCPError
from ..protocol.versions import is_modern
from .context import Context
from .pagination import canonical, page
from .resources import not_found
from .subscriptions import listen

if TYPE_CHECKING:
    from .server import Server

__all__ = ["HANDLERS"]

JSON = dict[str, Any]

LISTS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}


async def list_items(s: Server, ctx: Context, params: JSON, method: str) -> JSON:
    kind = LISTS[method]
    version = ctx.negotiated.version
    registry = s.registry(kind)
    start, stop, next_cursor = page(len(registry), params.get("cursor"), s.page_size)
    # Keyed by the decoded page, and only pages the server's own cursors lead to are kept, so the
    # cache holds at most one entry per version and page whatever cursors clients send.
    key = (kind, version, start)
    cached = s._list_cache.get(key)
    if cached is not None:
        return cached
    items: list[Any] = list(registry.values())[start:stop]
    # Serialised once per version and page; the cache is dropped whenever the list changes.
    result: JSON = {kind: orjson.Fragment(orjson.dumps([i.definition(version) for i in items]))}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    if is_modern(version):
        result.update(s.cache.fields())
    if canonical(start, s.page_size):
        s._list_cache[key] = result
    return result


def named(registry: dict[str, Any], params: JSON, kind: str) -> tuple[Any, JSON | None]:
    """The tool or prompt `params` names, and its arguments; -32602 for an unknown name or bad arguments."""
    name = params.get("name")
    item = registry.get(name) if isinstance(name, str) else None
    if item is None:
        raise MCPError(INVALID_PARAMS, f"Unknown {kind}: {name!r}")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise MCPError(INVALID_PARAMS, "Invalid params: arguments must be an object")
    return item, arguments


async def call_tool(s: Server, ctx: Context, params: JSON) -> JSON:
    tool, arguments = named(s.tools, params, "tool")
    result: JSON = await tool.call(arguments, ctx, ctx.negotiated.version, mask_errors=s.mask_errors)
    return result


async def read(s: Server, ctx: Context, params: JSON) -> JSON:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise MCPError(INVALID_PARAMS, "Invalid params: resources/read needs a string uri")
    result: JSON = {"contents": await s.read_resource(uri, ctx)}
    if is_modern(ctx.negotiated.version):
        result.update(s.cache_hint_for(uri).fields())
    return result


async def discover(s: Server, ctx: Context, params: JSON) -> JSON:
    """server/discover (2026-07-28): the versions, capabilities and identity; serverInfo is added
    to `_meta` by the core like on every stateless result."""
    result: JSON = {
        "supportedVersions": list(reversed(ctx.session.connection.versions)),
        "capabilities": s.capabilities(),
        **s.cache.fields(),
    }
    if s.instructions:
        result["instructions"] = s.instructions
    return result


def knows(s: Server, uri: str) -> bool:
    return uri in s.resources or any(t.arguments(uri) is not None for t in s.templates.values())


async def subscribe(s: Server, ctx: Context, params: JSON) -> JSON:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise MCPError(INVALID_PARAMS, "Invalid params: resources/subscribe needs a string uri")
    if not knows(s, uri):
        raise not_found(uri)
    s._peers[ctx.session].subscriptions.add(uri)
    return {}


async def unsubscribe(s: Server, ctx: Context, params: JSON) -> JSON:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise MCPError(INVALID_PARAMS, "Invalid params: resources/unsubscribe needs a string uri")
    s._peers[ctx.session].subscriptions.discard(uri)
    return {}


async def get_prompt(s: Server, ctx: Context, params: JSON) -> JSON:
    prompt, arguments = named(s.prompts, params, "prompt")
    result: JSON = await prompt.get(arguments, ctx)
    return result


async def complete(s: Server, ctx: Context, params: JSON) -> JSON:
    return await s.completions.complete(params, s.prompts, s.templates)


async def _list_tools(s: Server, c: Context, p: JSON) -> JSON:
    return await list_items(s, c, p, "tools/list")


async def _list_resources(s: Server, c: Context, p: JSON) -> JSON:
    return await list_items(s, c, p, "resources/list")


async def _list_templates(s: Server, c: Context, p: JSON) -> JSON:
    return await list_items(s, c, p, "resources/templates/list")


async def _list_prompts(s: Server, c: Context, p: JSON) -> JSON:
    return await list_items(s, c, p, "prompts/list")


HANDLERS: dict[str, Callable[[Server, Context, JSON], Any]] = {
    "tools/list": _list_tools,
    "tools/call": call_tool,
    "resources/list": _list_resources,
    "resources/templates/list": _list_templates,
    "resources/read": read,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "prompts/list": _list_prompts,
    "prompts/get": get_prompt,
    "completion/complete": complete,
    "server/discover": discover,
    "subscriptions/listen": listen,
}
