"""One server that exercises every MCP feature mcpkit has: `python examples/everything.py` (stdio).

With `--http [--port N]` it serves the same over Streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import base64
import sys
from typing import Annotated, Literal

import anyio
from pydantic import BaseModel, Field

from mcpkit import Context, Server, ToolError

# `annotations` is taken by the __future__ import above, so the content helper goes by another name
from mcpkit.content import annotations as annotate
from mcpkit.content import audio, embedded_text, image, resource_link, text

server = Server(
    "mcpkit-everything",
    "0.1.0",
    title="mcpkit everything demo",
    instructions="A demo server: every tool, resource and prompt here exists to show one MCP feature.",
    page_size=50,
)

# A 1x1 transparent PNG and a tiny WAV header: real bytes of the claimed types.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SILENT_WAV = (
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00"
    b"\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
)


@server.tool(read_only=True, idempotent=True)
def echo(text: Annotated[str, "The text to send back"]) -> str:
    """Echo the text back unchanged."""
    return text


@server.tool(title="Add two integers", read_only=True, idempotent=True, open_world=False)
def add(a: int, b: int) -> int:
    """Add two integers; the sum comes back as structured content too."""
    return a + b


@server.tool()
async def slow(seconds: Annotated[float, Field(ge=0, le=600)], ctx: Context) -> str:
    """Wait `seconds`, reporting progress ten times; cancellation stops it at once."""
    steps = 10
    for step in range(1, steps + 1):
        await anyio.sleep(seconds / steps)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"waited {seconds} seconds"


@server.tool()
async def summarize(topic: str, ctx: Context) -> str:
    """Ask the client's LLM (sampling) for a one-line summary of a topic."""
    result = await ctx.sample(
        f"Summarise {topic} in one line.",
        max_tokens=100,
        system_prompt="You are terse.",
        model_preferences={"hints": [{"name": "claude"}], "speedPriority": 0.8},
    )
    content = result.get("content", {})
    return content.get("text", "") if isinstance(content, dict) else str(content)


class Booking(BaseModel):
    guests: int = Field(ge=1, le=10, description="How many people")
    confirm: bool = Field(description="Confirm the booking")


@server.tool(destructive=False)
async def book_table(restaurant: str, ctx: Context) -> str:
    """Ask the user (elicitation) how many guests, then book."""
    answer = await ctx.elicit(f"Book a table at {restaurant}?", Booking)
    if not answer.accepted or not answer.content or not answer.content.get("confirm"):
        return f"No booking made ({answer.action})."
    return f"Booked {restaurant} for {answer.content['guests']}."


@server.tool()
async def connect_account(service: str, ctx: Context) -> str:
    """URL-mode elicitation (2025-11-25): send the user to a page, then say it is done."""
    elicitation_id = f"connect-{service}"
    answer = await ctx.elicit_url(
        f"Connect your {service} account", f"https://example.com/connect/{service}", elicitation_id
    )
    if answer.accepted:
        await ctx.complete_elicitation(elicitation_id)
    return f"URL elicitation answered: {answer.action}"


@server.tool()
async def log_levels(ctx: Context) -> str:
    """Send one log message at each RFC 5424 level; logging/setLevel filters them."""
    for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
        await ctx.log(level, {"message": f"a {level} message"}, logger="everything")
    return "logged"


@server.tool()
async def list_client_roots(ctx: Context) -> list[str]:
    """The URIs of the client's filesystem roots."""
    return [root["uri"] for root in await ctx.list_roots()]


class Weather(BaseModel):
    city: str
    celsius: float
    conditions: Literal["sunny", "cloudy", "rain", "snow"]


@server.tool(read_only=True)
def weather(city: str) -> Weather:
    """Structured output: an outputSchema from the return annotation."""
    return Weather(city=city, celsius=21.5, conditions="sunny")


@server.tool(structured_output=False)
def media() -> list[dict[str, object]]:
    """Every content type: text, image, audio, a resource link and an embedded resource."""
    return [
        text("Here is everything", annotations=annotate(audience=["user"], priority=0.9)),
        image(PIXEL_PNG, "image/png"),
        audio(SILENT_WAV, "audio/wav"),
        resource_link("demo://readme", "readme", mime_type="text/markdown", description="The readme"),
        embedded_text("demo://inline", "inline resource text", "text/plain", meta={"note": "passed through"}),
    ]


@server.tool()
def fail(message: str = "it broke") -> str:
    """Always fails: a tool error is a result with isError, not a protocol error."""
    raise ToolError(message)


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Tell subscribers that a resource changed (notifications/resources/updated)."""
    await ctx.server.notify_resource_updated(uri)
    return f"touched {uri}"


server.add_resource(
    "demo://readme",
    content="# mcpkit everything\n\nA static resource.",
    name="readme",
    title="Read me",
    mime_type="text/markdown",
    annotations=annotate(audience=["user", "assistant"], priority=0.5, last_modified="2026-01-01T00:00:00Z"),
)
server.add_resource(
    "demo://pixel",
    content=PIXEL_PNG,
    name="pixel",
    mime_type="image/png",
    description="A binary resource, read as a base64 blob",
)


@server.resource("demo://notes/{note_id}", name="note", mime_type="text/plain", description="A note by id")
def note(note_id: int) -> str:
    return f"Note number {note_id}"


@server.completion(template="demo://notes/{note_id}", argument="note_id")
def complete_note(value: str, context: dict[str, str]) -> list[str]:
    return [str(n) for n in range(1, 200) if str(n).startswith(value)]


@server.prompt(title="Greeting")
def greet(name: Annotated[str, "Who to greet"], style: str = "friendly") -> str:
    """A greeting prompt with one required and one optional argument."""
    return f"Write a {style} greeting for {name}."


@server.completion(prompt="greet", argument="style")
def complete_style(value: str, context: dict[str, str]) -> list[str]:
    return [s for s in ("friendly", "formal", "pirate") if s.startswith(value)]


@server.prompt()
def review_code(code: str) -> list[dict[str, object]]:
    """A prompt with several messages, one of them an embedded resource."""
    return [
        {"role": "user", "content": f"Please review:\n{code}"},
        {"role": "assistant", "content": "Sure. What should I focus on?"},
        {"role": "user", "content": embedded_text("demo://style-guide", "Prefer clarity.", "text/plain")},
    ]


def main(argv: list[str]) -> None:
    if "--http" in argv:
        from mcpkit.transports import serve_http

        port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 8000
        serve_http(server, host="127.0.0.1", port=port)
    else:
        server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
