"""The inspector's backend: one mcpkit Client at a time, driven by the page's actions (JSON in, JSON
out), with everything the server sends told to the page through the hub."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from ..client.client import Client
from ..client.tasks import TaskHandle
from ..protocol.errors import MCPError
from ..protocol.jsonrpc import JSON
from .asks import Asks
from .calls import Running
from .hub import Hub
from .opening import Target, open_client

__all__ = ["ActionError", "Backend", "innermost"]

Action = Callable[[JSON], Awaitable[Any]]


class ActionError(Exception):
    """The page asked for something that cannot be done now (not connected, an unknown action...)."""


class Backend:
    """Holds the connection in `tg` (it outlives the HTTP request that made it) and answers actions."""

    def __init__(self, tg: TaskGroup, hub: Hub, target: Target | None = None) -> None:
        self.tg = tg
        self.hub = hub
        self.target = target
        self.asks, self.running = Asks(hub), Running()
        self.client: Client | None = None
        self.roots: list[JSON] = []
        self.tasks: dict[str, TaskHandle] = {}
        self._scope: anyio.CancelScope | None = None
        self._ended = anyio.Event()
        self.actions: dict[str, Action] = {
            "state": self.state,
            "connect": self.connect,
            "disconnect": self.disconnect,
            "list": self.list_items,
            "call": self.call,
            "read": self.read,
            "prompt": self.prompt,
            "complete": self.complete,
            "cancel": self.cancel,
            "answer": self.answer,
            "roots": self.set_roots,
            "setLevel": self.set_level,
            "subscribe": self.subscribe,
            "task": self.task,
            "ping": self.ping,
        }

    async def act(self, name: str, body: JSON) -> Any:
        action = self.actions.get(name)
        if action is None:
            raise ActionError(f"no action {name!r}")
        return await action(body)

    def _client(self) -> Client:
        if self.client is None:
            raise ActionError("not connected")
        return self.client

    # ---- the connection ----------------------------------------------------------------------

    async def state(self, body: JSON | None = None) -> JSON:
        target = self.target
        out: JSON = {"connected": self.client is not None, "roots": self.roots}
        if target is not None:
            out.update(target=target.server, era=target.era, protocolVersion=target.protocol_version)
        if self.client is not None:
            client = self.client
            out.update(
                serverInfo=client.server_info,
                capabilities=client.server_capabilities,
                protocol=client.protocol,
                stateless=client.stateless,
                instructions=client.instructions,
            )
        return out

    async def connect(self, body: JSON) -> JSON:
        await self.disconnect({})
        base = self.target or Target(server="")
        self.target = Target(
            server=str(body.get("target") or base.server),
            era=str(body.get("era") or base.era),
            protocol_version=body.get("protocolVersion") or base.protocol_version,
            headers=list(body.get("headers") or base.headers),
            auth=body.get("auth", base.auth) or None,
            client_id=body.get("clientId") or base.client_id,
            client_secret=body.get("clientSecret") or base.client_secret,
            timeout=base.timeout,
        )
        self.hub.publish("connecting", target=self.target.server, era=self.target.era)
        try:
            await self.tg.start(self._hold, self.target)
        except Exception as exc:
            self.hub.publish("disconnected", error=_message(exc))
            raise
        state = await self.state()
        self.hub.publish("connected", state=state)
        return state

    async def _hold(self, target: Target, *, task_status: TaskStatus[None]) -> None:
        started = False
        self._ended = anyio.Event()
        try:
            # a person signing in takes longer than a server answering
            wait = max(target.timeout, 300.0) if target.auth == "oauth" else target.timeout
            with anyio.CancelScope(deadline=anyio.current_time() + wait) as scope:
                self._scope = scope
                async with open_client(target, self.hub, **self._handlers()) as client:
                    scope.deadline = math.inf
                    self.client, started = client, True
                    if "logging" in client.server_capabilities:
                        with contextlib.suppress(MCPError):  # a server that refuses still works
                            await client.set_logging_level("debug")
                    task_status.started()
                    await client.session.closed.wait()
                    raise ConnectionError(
                        "the server closed the connection (did it exit? its stderr is in the log)"
                    )
            if not started:
                raise TimeoutError(f"the server did not answer within {wait:g}s")
        except Exception as exc:
            if not started:
                raise
            self.hub.publish("disconnected", error=_message(exc))
        else:
            self.hub.publish("disconnected")
        finally:
            self.client, self._scope = None, None
            self.tasks.clear()
            self._ended.set()

    def _handlers(self) -> JSON:
        def on_log(params: JSON) -> None:
            self.hub.publish("log", params=params)

        def on_notification(method: str, params: JSON) -> None:
            if method != "notifications/message":  # already told as a log
                self.hub.publish("notification", method=method, params=params)

        return {
            "name": "mcpkit-inspector",
            "sampling": lambda params: self.asks.ask("sampling/createMessage", params),
            "elicitation": lambda params: self.asks.ask("elicitation/create", params),
            "elicitation_url": True,
            "roots": lambda: self.roots,
            "on_log": on_log,
            "on_notification": on_notification,
        }

    async def disconnect(self, body: JSON) -> JSON:
        if self._scope is not None:
            self._scope.cancel()
            await self._ended.wait()
        return {"connected": False}

    # ---- what the page asks of the server ----------------------------------------------------

    async def list_items(self, body: JSON) -> list[JSON]:
        client = self._client()
        fetch = {
            "tools": client.list_all_tools,
            "resources": client.list_all_resources,
            "templates": client.list_all_resource_templates,
            "prompts": client.list_all_prompts,
        }.get(str(body.get("kind")))
        if fetch is None:
            raise ActionError("kind is tools, resources, templates or prompts")
        return await fetch()

    async def call(self, body: JSON) -> JSON:
        client, name = self._client(), str(body.get("name"))
        call_id = str(body.get("callId") or name)
        arguments = body.get("arguments") or {}

        def progress(done: float, total: float | None, message: str | None) -> None:
            self.hub.publish("progress", callId=call_id, progress=done, total=total, message=message)

        async with self.running.run(call_id) as scope:
            if body.get("task"):
                handle = await client.call_tool_as_task(name, arguments)
                if handle.task_id is None:
                    return {"result": handle.task}
                self.tasks[handle.task_id] = handle
                return {"task": handle.task}
            # no deadline: a call may wait on a person answering an elicitation; the page can cancel it
            return await client.call_tool(name, arguments, on_progress=progress, timeout=math.inf)
        assert scope.cancelled_caught
        raise ActionError("cancelled")

    async def cancel(self, body: JSON) -> JSON:
        return {"cancelled": self.running.cancel(str(body.get("callId")))}

    async def task(self, body: JSON) -> JSON:
        handle = self.tasks.get(str(body.get("taskId")))
        if handle is None:
            raise ActionError("no such task (started in this connection)")
        op = body.get("op")
        if op == "get":
            return await handle.refresh()
        if op == "cancel":
            await handle.cancel()
            return await handle.refresh()
        if op == "result":

            def status(task: JSON) -> None:
                self.hub.publish("task", task=task)

            return await handle.result(on_status=status)
        raise ActionError("op is get, cancel or result")

    async def read(self, body: JSON) -> JSON:
        return await self._client().read_resource(str(body.get("uri")))

    async def prompt(self, body: JSON) -> JSON:
        arguments = {str(k): str(v) for k, v in (body.get("arguments") or {}).items()}
        return await self._client().get_prompt(str(body.get("name")), arguments)

    async def complete(self, body: JSON) -> JSON:
        context = body.get("context") or None
        return await self._client().complete(
            body.get("ref") or {}, str(body.get("argument")), str(body.get("value", "")), context
        )

    async def subscribe(self, body: JSON) -> JSON:
        client, uri = self._client(), str(body.get("uri"))
        await (client.unsubscribe(uri) if body.get("off") else client.subscribe(uri))
        return {}

    async def set_level(self, body: JSON) -> JSON:
        await self._client().set_logging_level(str(body.get("level", "debug")))
        return {}

    async def ping(self, body: JSON) -> JSON:
        await self._client().ping()
        return {}

    # ---- the inspector's side ----------------------------------------------------------------

    async def answer(self, body: JSON) -> JSON:
        error = body.get("error")
        done = self.asks.answer(
            str(body.get("id")), body.get("result"), None if error is None else str(error)
        )
        if not done:
            raise ActionError("that request is no longer waiting")
        return {}

    async def set_roots(self, body: JSON) -> JSON:
        roots = body.get("roots")
        if not isinstance(roots, list) or not all(isinstance(r, dict) and "uri" in r for r in roots):
            raise ActionError("roots is a list of {uri, name?}")
        self.roots = roots
        if self.client is not None:
            await self.client.roots_changed()
        return {"roots": roots}


def innermost(exc: BaseException) -> BaseException:
    """The first error inside any exception groups (a task group wraps what its tasks raise)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _message(exc: BaseException) -> str:
    leaf = innermost(exc)
    return str(leaf) or type(leaf).__name__
