"""The tools and prompt the conformance suite's 2026-07-28 scenarios call (server-stateless and the
input-required-result-* scenarios), written once with mcpkit's Context: each ask is a
server-to-client request on a handshake session and an input-required round on a stateless request.

Keys, messages and schemas are the ones the scenario descriptions name.
"""

from __future__ import annotations

from typing import Any

from mcpkit import Context, Server

JSON = dict[str, Any]


def _schema(field: str, kind: str = "string") -> JSON:
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


def _elicit(message: str, field: str, kind: str = "string") -> JSON:
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": _schema(field, kind)},
    }


def _sample(prompt: str, max_tokens: int) -> JSON:
    messages = [{"role": "user", "content": {"type": "text", "text": prompt}}]
    return {"method": "sampling/createMessage", "params": {"messages": messages, "maxTokens": max_tokens}}


_ROOTS: JSON = {"method": "roots/list", "params": {}}


def _sampled_text(result: JSON) -> str:
    content = result.get("content")
    return str(content.get("text", "")) if isinstance(content, dict) else ""


def add_modern_tools(server: Server) -> None:
    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name, then greets them."""
        answer = await ctx.elicit("What is your name?", _schema("name"), key="user_name")
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's LLM a question and returns its answer."""
        answer = await ctx.request_input({"capital_question": _sample("What is the capital of France?", 100)})
        return _sampled_text(answer["capital_question"])

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Lists the client's roots."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(str(r.get("uri")) for r in roots)

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for confirmation; the second round proves the sealed requestState came back intact."""
        answer = await ctx.elicit("Please confirm", _schema("ok", "boolean"), key="confirm")
        return f"state-ok: confirmed={(answer.content or {}).get('ok')}"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for a name, a greeting and the roots in one round."""
        answers = await ctx.request_input(
            {
                "user_name": _elicit("What is your name?", "name"),
                "greeting": _sample("Generate a greeting", 50),
                "client_roots": _ROOTS,
            }
        )
        name = (answers["user_name"].get("content") or {}).get("name")
        roots = answers["client_roots"].get("roots") or []
        return f"{_sampled_text(answers['greeting'])} {name} ({len(roots)} roots)"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Two questions, one per round."""
        first = await ctx.elicit("Step 1: What is your name?", _schema("name"), key="step1")
        second = await ctx.elicit("Step 2: What is your favorite color?", _schema("color"), key="step2")
        return f"{(first.content or {}).get('name')} likes {(second.content or {}).get('color')}"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Its requestState is HMAC-sealed: an altered one is refused with -32602."""
        answer = await ctx.elicit("Please confirm", _schema("ok", "boolean"), key="confirm")
        return f"confirmed={(answer.content or {}).get('ok')}"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only for what the client declared it can answer."""
        declared = ctx.client_capabilities
        wanted: JSON = {}
        if "elicitation" in declared:
            wanted["user_name"] = _elicit("What is your name?", "name")
        if "sampling" in declared:
            wanted["greeting"] = _sample("Generate a greeting", 50)
        if "roots" in declared:
            wanted["client_roots"] = _ROOTS
        answers = await ctx.request_input(wanted) if wanted else {}
        return "answered: " + ", ".join(sorted(answers)) if answers else "nothing to ask"

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that asks the user for its context first."""
        answer = await ctx.elicit(
            "What context should the prompt use?", _schema("context"), key="user_context"
        )
        return f"Use this context: {(answer.content or {}).get('context')}"

    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling: without it the answer is -32021."""
        return _sampled_text(await ctx.sample("Say hi", max_tokens=10))

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Asks the user something; in 2026-07-28 that is an input-required result, never a request."""
        answer = await ctx.elicit("Stream check: your name?", _schema("name"), key="name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs one message (sent only when the request asked for a log level)."""
        await ctx.info("test_logging_tool ran")
        return "logged"

    changes = {"tools": 0, "prompts": 0}

    @server.tool()
    def test_trigger_tool_change() -> str:
        """Adds a tool, so list_changed goes out."""
        changes["tools"] += 1
        name = f"test_added_tool_{changes['tools']}"
        server.add_tool(lambda: "added", name=name, description="Added by test_trigger_tool_change.")
        return "tool list changed"

    @server.tool()
    def test_trigger_prompt_change() -> str:
        """Adds a prompt, so list_changed goes out."""
        changes["prompts"] += 1
        name = f"test_added_prompt_{changes['prompts']}"
        server.add_prompt(lambda: "added", name=name, description="Added by test_trigger_prompt_change.")
        return "prompt list changed"

    def test_custom_headers(region: str, query: str = "") -> str:
        return f"region={region} query={query}"

    # 2026-07-28 transports "Custom Headers from Tool Parameters": `region` travels as Mcp-Param-Region too.
    server.add_tool(
        test_custom_headers,
        name="test_custom_headers",
        description="Mirrors its region argument into the Mcp-Param-Region header.",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"},
            },
            "required": ["region"],
        },
    )
