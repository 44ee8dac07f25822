"""The server the fuzz tests attack: the tools, prompts and resources the spec's examples name.

Run as a script it serves stdio (the stdio fuzz test starts it as a real subprocess). Every handler
answers at once: none waits on the client, so an unanswered request is the server's fault.
"""

from __future__ import annotations

from mcpkit import Server

server = Server("fuzz-target", "1.0", page_size=2)


@server.tool()
def get_weather(location: str) -> str:
    """The example's tool: a made-up forecast."""
    return f"Sunny in {location}"


@server.tool()
def add(a: int, b: int = 2) -> int:
    return a + b


@server.tool()
def echo(text: str) -> str:
    return text


@server.prompt()
def code_review(code: str, language: str = "python") -> str:
    """The example's prompt."""
    return f"Review this {language}:\n{code}"


@server.completion(prompt="code_review", argument="language")
def complete_language(value: str, context: dict[str, str]) -> list[str]:
    return [name for name in ("python", "pytorch", "rust") if name.startswith(value)]


server.add_resource("file:///project/src/main.rs", content="fn main() {}", mime_type="text/x-rust")
server.add_resource("file:///project/config.json", content=b"{}", mime_type="application/json")


@server.resource("file:///project/notes/{note_id}", mime_type="text/plain")
def note(note_id: int) -> str:
    return f"note {note_id}"


if __name__ == "__main__":
    server.run(eof_grace=1.0)
