"""The server that the official MCP conformance suite's server scenarios expect, built on mcpkit.

    python examples/conformance_server.py --port 3001

serves it over Streamable HTTP at http://127.0.0.1:3001/mcp. Every tool, resource and prompt name,
argument, text and mime type below is the one a scenario of @modelcontextprotocol/conformance checks.
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path
from typing import Annotated, Any

import anyio
from conformance_modern import add_modern_tools
from conformance_tasks import add_task_tools

from mcpkit import Context, Server, ToolError
from mcpkit.content import audio, embedded_text, image, text

JSON = dict[str, Any]

server = Server(
    "mcpkit-conformance",
    "0.1.0",
    title="mcpkit conformance server",
    instructions="Implements the tools, resources and prompts of the MCP conformance suite.",
)

# A 1x1 red PNG and a short silent 8 kHz mono WAV: real data of the claimed types.
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
_WAV_SAMPLES = b"\x00\x00" * 80
SILENT_WAV = (
    b"RIFF"
    + (36 + len(_WAV_SAMPLES)).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little")  # PCM
    + (1).to_bytes(2, "little")  # mono
    + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little")
    + (2).to_bytes(2, "little")
    + (16).to_bytes(2, "little")
    + b"data"
    + len(_WAV_SAMPLES).to_bytes(4, "little")
    + _WAV_SAMPLES
)

# ---- tools -----------------------------------------------------------------------------------------


@server.tool()
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> list[JSON]:
    """Returns a 1x1 red PNG image."""
    return [image(RED_PIXEL_PNG, "image/png")]


@server.tool()
def test_audio_content() -> list[JSON]:
    """Returns a short silent WAV clip."""
    return [audio(SILENT_WAV, "audio/wav")]


@server.tool()
def test_embedded_resource() -> list[JSON]:
    """Returns an embedded text resource."""
    return [embedded_text("test://embedded-resource", "This is an embedded resource content.", "text/plain")]


@server.tool()
def test_multiple_content_types() -> list[JSON]:
    """Returns text, an image and an embedded resource together."""
    return [
        text("Multiple content types test:"),
        image(RED_PIXEL_PNG, "image/png"),
        embedded_text(
            "test://mixed-content-resource",
            json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
            "application/json",
        ),
    ]


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages while it runs."""
    await ctx.log("info", "Tool execution started")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 out of 100."""
    await ctx.report_progress(0, 100)
    await anyio.sleep(0.05)
    await ctx.report_progress(50, 100)
    await anyio.sleep(0.05)
    await ctx.report_progress(100, 100)
    return "Tool with progress executed successfully"


@server.tool()
def test_error_handling() -> str:
    """Always fails, as a tool error result."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_sampling(prompt: Annotated[str, "The prompt to send to the LLM"], ctx: Context) -> str:
    """Asks the client's LLM (sampling/createMessage) to answer the prompt."""
    result = await ctx.sample([{"role": "user", "content": text(prompt)}], max_tokens=100)
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    answer = " ".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    return f"LLM response: {answer}"


@server.tool()
async def test_elicitation(message: Annotated[str, "The message to show the user"], ctx: Context) -> str:
    """Asks the user (elicitation/create) for a username and an email address."""
    schema: JSON = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema)
    return f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation whose schema gives a default for every primitive type (SEP-1034)."""
    schema: JSON = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with all five enum schema shapes (SEP-1330)."""
    schema: JSON = {
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Pick one option",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {
                "type": "string",
                "description": "Pick one titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Pick one option (legacy enumNames)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Pick several options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Pick several titled options",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
        "required": [],
    }
    answer = await ctx.elicit("Please choose from the enum fields", schema)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"


def json_schema_2020_12_tool(**arguments: Any) -> str:
    return f"Received: {json.dumps(arguments)}"


# Registered with a raw schema so that $schema, $defs and additionalProperties reach tools/list untouched.
server.add_tool(
    json_schema_2020_12_tool,
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    },
)


@server.tool()
async def test_reconnection() -> str:
    """For the SSE polling scenario (SEP-1699): answers after a short pause."""
    await anyio.sleep(0.1)
    return "Reconnection test completed successfully"


# ---- resources -------------------------------------------------------------------------------------

server.add_resource(
    "test://static-text",
    content="This is the content of the static text resource.",
    name="static-text",
    description="A static text resource for testing",
    mime_type="text/plain",
)
server.add_resource(
    "test://static-binary",
    content=RED_PIXEL_PNG,
    name="static-binary",
    description="A static binary resource (a PNG image) for testing",
    mime_type="image/png",
)
server.add_resource(
    "test://watched-resource",
    content="This resource can be subscribed to for updates.",
    name="watched-resource",
    description="A resource to subscribe to",
    mime_type="text/plain",
)


@server.resource(
    "test://template/{id}/data",
    name="template-data",
    description="Data for an id, from a resource template",
    mime_type="application/json",
)
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


# ---- prompts ---------------------------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.completion(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
    return [v for v in ("paris", "park", "party") if v.startswith(value)]


@server.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, "URI of the resource to embed"],  # camelCase: the name the suite sends
) -> list[JSON]:
    """A prompt that embeds a resource."""
    resource = embedded_text(resourceUri, "Embedded resource content for testing.", "text/plain")
    return [
        {"role": "user", "content": resource},
        {"role": "user", "content": text("Please process the embedded resource above.")},
    ]


@server.prompt()
def test_prompt_with_image() -> list[JSON]:
    """A prompt with an image."""
    return [
        {"role": "user", "content": image(RED_PIXEL_PNG, "image/png")},
        {"role": "user", "content": text("Please analyze the image above.")},
    ]


add_modern_tools(server)
add_task_tools(server)


# the skills extension (SEP-2640): one skill with a supporting file in a subdirectory
server.skill(Path(__file__).parent / "skills" / "pdf-processing")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3001)
    args = parser.parse_args(argv)
    from mcpkit.transports import serve_http

    serve_http(server, host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
