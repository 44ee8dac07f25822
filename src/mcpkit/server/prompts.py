"""Prompts: a function's parameters become the prompt's arguments; its return value the messages.

Spec: server "Prompts". Arguments are strings; a missing required argument or an unknown prompt
is -32602 (Invalid params).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..content import text
from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import JSON
from .common_fields import add_common_fields
from .context import Context
from .invoke import invoke
from .request import RequestContext
from .signature import ArgumentError, Signature, describe, inspect_function

__all__ = ["Prompt"]


@dataclass(eq=False, slots=True)
class Prompt:
    name: str
    fn: Callable[..., Any]
    signature: Signature
    description: str | None
    arguments: list[JSON]
    title: str | None = None
    icons: list[JSON] | None = None
    meta: JSON | None = None
    scopes: frozenset[str] = frozenset()  # what a caller's access token must grant (scopes.py)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[JSON] | None = None,
        meta: JSON | None = None,
        scopes: Iterable[str] = (),
        context_type: type = Context,
        lifespan_type: type | None = None,
    ) -> Prompt:
        """The prompt `fn` is: its parameters the arguments, its name and docstring unless given.
        `scopes`: what a caller's access token must grant (as for tools)."""
        sig = inspect_function(
            fn, context_type=context_type, structured_output=False, lifespan_type=lifespan_type
        )
        required = set(sig.input_schema.get("required", ()))
        arguments = []
        for arg_name, prop in sig.input_schema.get("properties", {}).items():
            argument: JSON = {"name": arg_name, "required": arg_name in required}
            if "description" in prop:
                argument["description"] = prop["description"]
            arguments.append(argument)
        doc = description if description is not None else describe(fn)
        return cls(
            name or fn.__name__,
            fn,
            sig,
            doc,
            arguments,
            title=title,
            icons=icons,
            meta=meta,
            scopes=frozenset(scopes),
        )

    def definition(self, version: str) -> JSON:
        out: JSON = {"name": self.name, "arguments": self.arguments}
        if self.description is not None:
            out["description"] = self.description
        return add_common_fields(out, version, title=self.title, icons=self.icons, meta=self.meta)

    async def get(self, arguments: JSON | None, context: RequestContext) -> JSON:
        args = arguments or {}
        missing = [a["name"] for a in self.arguments if a["required"] and a["name"] not in args]
        if missing:
            raise InvalidParams(
                f"Missing required argument(s) for prompt {self.name!r}: {', '.join(missing)}"
            )
        try:
            kwargs = self.signature.bind(args)
        except ArgumentError as exc:
            raise InvalidParams(f"Invalid arguments for prompt {self.name!r}: {exc}") from None
        if self.signature.context_param:
            kwargs[self.signature.context_param] = context
        value = await invoke(self.fn, kwargs, self.signature.is_async, self.signature.dependencies, context)
        if isinstance(value, dict) and "messages" in value:
            return value
        result: JSON = {"messages": to_messages(value)}
        if self.description is not None:
            result["description"] = self.description
        return result


def to_messages(value: Any) -> list[JSON]:
    """PromptMessages from a str, a content block, a message dict, or a list of those."""
    items = value if isinstance(value, list | tuple) else [value]
    messages: list[JSON] = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": text(item)})
        elif isinstance(item, dict) and "role" in item:
            content = item.get("content")
            messages.append({**item, "content": text(content) if isinstance(content, str) else content})
        elif isinstance(item, dict) and "type" in item:
            messages.append({"role": "user", "content": item})
        else:
            raise TypeError(f"a prompt returned {type(item).__name__}, which is not a message")
    return messages
