"""The server's answer to each request method: one function per method, looked up in HANDLERS.

Each takes the Server's parts (Services: what is offered, who is connected, the tasks, the sealer), the
request's Context and its params, and nothing else: a handler can be tested with a Registry and a fake
session. The tasks/* methods are the tasks package's (tasks/handlers.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from ..protocol.errors import InvalidParams, MethodNotFound
from ..protocol.http_stateless import check_request_headers
from ..protocol.jsonrpc import JSON
from ..protocol.stateless import SUBSCRIPTION_ID
from ..protocol.tasks import TASK_NOTE, TASKS_EXTENSION
from ..protocol.versions import is_stateless
from .context import Context
from .registry import Registry, Shows
from .resources import not_found
from .services import Services
from .subscriptions import Listener, agreed_filter
from .tasks.handlers import (
    call_tool_task,
    cancel_task,
    followed_tasks,
    get_task,
    list_tasks,
    task_result,
    update_task,
)

__all__ = ["HANDLERS", "Handler", "handler_for"]

Handler = Callable[[Services, Context, JSON], Awaitable[JSON]]


def shows_of(services: Services, ctx: Context) -> Shows | None:
    """What the caller sees, when the server has a visibility hook (server/visibility.py)."""
    visibility = services.visibility
    return visibility.shows(ctx.auth) if visibility is not None else None


async def list_items(kind: str, services: Services, ctx: Context, params: JSON) -> JSON:
    token = ctx.auth
    granted = token.scopes if token is not None else None
    cursor, shows = params.get("cursor"), shows_of(services, ctx)
    return services.registry.listing(kind, ctx.negotiated.version, cursor, granted, shows)


def named(
    items: dict[str, Any], params: JSON, kind: str, shows: Shows | None = None
) -> tuple[Any, JSON | None]:
    """The tool or prompt `params` names, and its arguments; -32602 for an unknown name (or one `shows`
    hides from the caller) or bad arguments."""
    name = params.get("name")
    item = items.get(name) if isinstance(name, str) else None
    if item is not None and shows is not None and not shows(f"{kind}s", item):
        item = None
    if item is None:
        raise InvalidParams(f"Unknown {kind}: {name!r}")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise InvalidParams("Invalid params: arguments must be an object")
    return item, arguments


def check_mirrored(registry: Registry, ctx: Context, tool: str, params: JSON) -> None:
    """A 2026-07-28 call's Mcp-Param headers against its body (-32020, as Streamable HTTP answers it),
    for a server whose visibility hook leaves this check to dispatch: only once the tool is known to
    be one the caller sees."""
    headers = ctx.request_headers
    if headers is not None and ctx.stateless:
        check_request_headers(dict(headers), "tools/call", params, registry.mirrored_headers(tool))


def uri_of(params: JSON, method: str) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams(f"Invalid params: {method} needs a string uri")
    return uri


async def call_tool(services: Services, ctx: Context, params: JSON) -> JSON:
    registry = services.registry
    tool, arguments = named(registry.tools, params, "tool", shows_of(services, ctx))
    if services.visibility is not None:
        check_mirrored(registry, ctx, tool.name, params)
    # the common call (no `task`, a tool that does not take one) pays two lookups, not a version check
    if tool.task != "forbidden" or "task" in params:
        return await call_tool_task(services, ctx, tool, arguments, params)
    result: JSON = await tool.call(arguments, ctx, ctx.negotiated.version, mask_errors=registry.mask_errors)
    return result


async def read(services: Services, ctx: Context, params: JSON) -> JSON:
    registry = services.registry
    uri = uri_of(params, "resources/read")
    result: JSON = {"contents": await registry.read_resource(uri, ctx, shows_of(services, ctx))}
    if is_stateless(ctx.negotiated.version):
        result.update(registry.cache_hint_for(uri).fields())
    return result


async def discover(services: Services, ctx: Context, params: JSON) -> JSON:
    """server/discover (2026-07-28): the versions, capabilities and identity; serverInfo is added
    to `_meta` by the core like on every stateless result."""
    registry = services.registry
    capabilities = registry.capabilities()
    if capabilities.pop("tasks", None) is not None:  # the 2025-11-25 slot; here, the extension
        capabilities["extensions"] = {TASKS_EXTENSION: {}, **capabilities.get("extensions", {})}
    result: JSON = {
        "supportedVersions": list(reversed(ctx.session.connection.versions)),
        "capabilities": capabilities,
        **registry.cache.fields(),
    }
    if registry.instructions:
        result["instructions"] = registry.instructions
    return result


async def subscribe(services: Services, ctx: Context, params: JSON) -> JSON:
    registry, peers = services.registry, services.peers
    uri = uri_of(params, "resources/subscribe")
    peers.check_uri(uri)
    if not registry.knows(uri, shows_of(services, ctx)):
        raise not_found(uri)
    await peers.subscribe(ctx.session, uri)
    return {}


async def unsubscribe(services: Services, ctx: Context, params: JSON) -> JSON:
    await services.peers.unsubscribe(ctx.session, uri_of(params, "resources/unsubscribe"))
    return {}


async def get_prompt(services: Services, ctx: Context, params: JSON) -> JSON:
    registry = services.registry
    prompt, arguments = named(registry.prompts, params, "prompt", shows_of(services, ctx))
    result: JSON = await prompt.get(arguments, ctx)
    return result


async def complete(services: Services, ctx: Context, params: JSON) -> JSON:
    registry, shows = services.registry, shows_of(services, ctx)
    prompts, templates = registry.prompts, registry.templates
    if shows is not None:  # a hidden prompt or template is completed as one that does not exist
        prompts = {key: item for key, item in prompts.items() if shows("prompts", item)}
        templates = {key: item for key, item in templates.items() if shows("resourceTemplates", item)}
    return await registry.completions.complete(params, prompts, templates)


async def listen(services: Services, ctx: Context, params: JSON) -> JSON:
    """subscriptions/listen (2026-07-28): change notifications until the client cancels."""
    requested = params.get("notifications")
    agreed = agreed_filter(requested, services.registry.capabilities())
    tasks: list[JSON] = []
    if isinstance(requested, dict) and "taskIds" in requested:  # the tasks extension
        tasks = await followed_tasks(services, ctx, requested["taskIds"])
        agreed["taskIds"] = [task["taskId"] for task in tasks]
    listener = Listener.open(ctx.request_id, agreed)
    if services.visibility is not None:  # it hears of the items this caller sees
        services.visibility.seen(listener, ctx.auth)
    for task in tasks:  # each one's state now, first: a change before the listener opened is not lost
        listener.offer(TASK_NOTE, task)
    with services.peers.listening(listener):
        await listener.relay(ctx.session, agreed)
    return {"_meta": {SUBSCRIPTION_ID: ctx.request_id}}  # graceful closure: the server ended it


async def extension_method(method: str, services: Services, ctx: Context, params: JSON) -> JSON:
    """A method an extension adds (server/extensions.py); -32601 when no extension serves it."""
    extension = services.registry.extension_for(method)
    if extension is None:
        raise MethodNotFound(f"Method not found: {method!r}")
    return await extension.handle(method, ctx, params, shows_of(services, ctx))


def handler_for(method: str) -> Handler:
    """The handler of `method`: the core's, else the extension method's."""
    return HANDLERS.get(method) or partial(extension_method, method)


HANDLERS: dict[str, Handler] = {
    "tools/list": partial(list_items, "tools"),
    "tools/call": call_tool,
    "resources/list": partial(list_items, "resources"),
    "resources/templates/list": partial(list_items, "resourceTemplates"),
    "resources/read": read,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "prompts/list": partial(list_items, "prompts"),
    "prompts/get": get_prompt,
    "completion/complete": complete,
    "server/discover": discover,
    "subscriptions/listen": listen,
    "tasks/get": get_task,
    "tasks/update": update_task,
    "tasks/cancel": cancel_task,
    "tasks/result": task_result,
    "tasks/list": list_tasks,
}
