"""The outputSchema of each tool a client has listed, and the check of a tools/call result against it
(tools "Output Schema": clients SHOULD validate structured results against it)."""

from __future__ import annotations

from typing import Any

from ..protocol.errors import INVALID_PARAMS, RemoteError
from ..protocol.jsonrpc import JSON
from ..protocol.schema_check import compile_schema, schema_problems

__all__ = ["OutputSchemas"]


class OutputSchemas:
    """Compiled outputSchemas by tool name, learned from tools/list results; a tool list that changed
    is forgotten, so a result is checked only against a schema of the current list."""

    def __init__(self) -> None:
        self._by_tool: dict[str, Any] = {}

    def learn(self, tools_list: JSON) -> None:
        """Compile the outputSchema of each tool in a tools/list result."""
        for tool in tools_list.get("tools", []):
            schema = tool.get("outputSchema")
            if isinstance(schema, dict) and isinstance(tool.get("name"), str):
                self._by_tool[tool["name"]] = compile_schema(schema)

    def forget(self) -> None:
        self._by_tool.clear()

    def check(self, name: str, result: JSON) -> None:
        """RemoteError (-32602) when a successful result of tool `name`, which declared an outputSchema,
        has no structuredContent or structuredContent that breaks the schema."""
        validator = self._by_tool.get(name)
        if validator is None or result.get("isError"):
            return
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
