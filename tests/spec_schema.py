"""The spec's own JSON Schemas as a check on what mcpkit puts on the wire (tests only)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson

from mcpkit.protocol.framing import Oversized
from mcpkit.runtime.stream import Deliver, Inbound, MessageStream, Outgoing, WrappedStream

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec"
JSON = dict[str, Any]

# method -> (request type, response type) in the 2026-07-28 schema
_MODERN = {
    "server/discover": ("DiscoverRequest", "DiscoverResultResponse"),
    "tools/list": ("ListToolsRequest", "ListToolsResultResponse"),
    "tools/call": ("CallToolRequest", "CallToolResultResponse"),
    "resources/list": ("ListResourcesRequest", "ListResourcesResultResponse"),
    "resources/templates/list": ("ListResourceTemplatesRequest", "ListResourceTemplatesResultResponse"),
    "resources/read": ("ReadResourceRequest", "ReadResourceResultResponse"),
    "prompts/list": ("ListPromptsRequest", "ListPromptsResultResponse"),
    "prompts/get": ("GetPromptRequest", "GetPromptResultResponse"),
    "completion/complete": ("CompleteRequest", "CompleteResultResponse"),
    "subscriptions/listen": ("SubscriptionsListenRequest", "SubscriptionsListenResultResponse"),
}


# method -> result type in the handshake-era schemas (2025-11-25), where a response's result is generic
_HANDSHAKE_RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "sampling/createMessage": "CreateMessageResult",
    "elicitation/create": "ElicitResult",
    "roots/list": "ListRootsResult",
    "tasks/get": "GetTaskResult",
    "tasks/result": "GetTaskPayloadResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
}


def available(version: str) -> bool:
    return (SPEC / version / "schema.json").is_file()


@functools.cache
def _schema(version: str) -> JSON:
    loaded: JSON = json.loads((SPEC / version / "schema.json").read_text())
    return loaded


@functools.cache
def validator(version: str, definition: str) -> Any:
    schema = _schema(version)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    wrapper = {
        "$schema": schema.get("$schema"),
        defs_key: schema[defs_key],
        "$ref": f"#/{defs_key}/{definition}",
    }
    return jsonschema_rs.validator_for({k: v for k, v in wrapper.items() if v is not None})


def definitions(version: str) -> set[str]:
    schema = _schema(version)
    return set(schema.get("$defs") or schema.get("definitions") or {})


def problems(version: str, definition: str, instance: Any) -> list[str]:
    return [
        f"{definition}: {e.message} at {list(e.instance_path)}"
        for e in validator(version, definition).iter_errors(instance)
    ]


def modern_type(message: JSON, methods: dict[Any, str], sent_by_server: bool) -> str:
    """The 2026-07-28 schema type one message must satisfy."""
    if "method" in message:
        if "id" not in message:
            return "ServerNotification" if sent_by_server else "ClientNotification"
        return _MODERN[message["method"]][0]
    if "error" in message:
        return "JSONRPCErrorResponse"
    method = methods.get(message.get("id"))
    return _MODERN[method][1] if method in _MODERN else "JSONRPCResultResponse"


class CheckedStream(WrappedStream):
    """Wraps one end of a stream: every message that end sends must satisfy the 2026-07-28 schema."""

    def __init__(self, inner: MessageStream, version: str = "2026-07-28", *, server: bool = True) -> None:
        super().__init__(inner)
        self.version = version
        self.server = server
        self.methods: dict[Any, str] = {}
        self.failures: list[str] = []
        self.checked = 0

    async def deliver_to(self, deliver: Deliver) -> None:
        async def noted(inbound: Inbound) -> None:
            self._note(inbound.data)
            await deliver(inbound)

        await self.inner.deliver_to(noted)

    def _note(self, data: Any) -> None:
        """Remember the method of each request this end receives, to type the response it sends."""
        if isinstance(data, Oversized):
            return
        try:
            message = data if isinstance(data, dict) else orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.methods[message["id"]] = message["method"]

    async def send(self, out: Outgoing) -> None:
        message = orjson.loads(out.data)
        if self.version == "2026-07-28":
            self.failures += problems(self.version, modern_type(message, self.methods, self.server), message)
        else:
            self.failures += self._handshake_problems(message)
        self.checked += 1
        await self.inner.send(out)

    def _handshake_problems(self, message: JSON) -> list[str]:
        """The whole message as a JSON-RPC message of the version, and a result as its method's type."""
        found = problems(self.version, "JSONRPCMessage", message)
        if "method" in message:
            union = ("Server" if self.server else "Client") + (
                "Notification" if "id" not in message else "Request"
            )
            return found + problems(self.version, union, message)
        result_type = _HANDSHAKE_RESULTS.get(self.methods.get(message.get("id"), ""))
        if isinstance(message.get("result"), dict) and "task" in message["result"]:
            result_type = "CreateTaskResult"  # a task-augmented request accepted (2025-11-25 tasks)
        if result_type is not None and "result" in message:
            found += problems(self.version, result_type, message["result"])
        return found
