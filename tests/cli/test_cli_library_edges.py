"""Library rough edges a user meets early (issue 31, items 17 and 18): an optional dependency that is
missing is one line naming its extra, and ctx.elicit with a pydantic model gives that model back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from mcpkit import Server
from mcpkit.server import Context
from mcpkit.testing import connect

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "examples" / "skills" / "pdf-processing"


def without(tmp_path: Path, module: str) -> dict[str, str]:
    """An environment in which importing `module` fails as if it were not installed."""
    blocked = tmp_path / "blocked" / module
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{module}'\", name='{module}')\n"
    )
    return {**os.environ, "PYTHONPATH": f"{blocked.parent}{os.pathsep}{ROOT / 'src'}"}


def test_connect_http_without_the_http_extra_names_it(tmp_path: Path) -> None:
    code = (
        "import anyio\nfrom mcpkit.client import connect_http\n"
        "async def main():\n    async with connect_http('http://127.0.0.1:9/mcp'):\n        pass\n"
        "try:\n    anyio.run(main)\nexcept ModuleNotFoundError as exc:\n"
        "    print(type(exc).__name__, exc, sep=': ')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=without(tmp_path, "httpx"),
        timeout=60,
    )
    assert done.stdout == "MissingExtra: connect_http needs httpx: pip install 'mcpkit[http]'\n", done.stderr


def test_a_server_with_skills_without_pyyaml_is_one_line(tmp_path: Path) -> None:
    server = tmp_path / "skilled.py"
    server.write_text(f"from mcpkit import Server\n\nserver = Server('s')\nserver.skill({str(SKILL)!r})\n")
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "serve", str(server), "--check"],
        capture_output=True,
        text=True,
        env=without(tmp_path, "yaml"),
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (
        2,
        "mcpkit: this needs the skills extra: pip install 'mcpkit[skills]' (No module named 'yaml')\n",
    )


class Booking(BaseModel):
    guests: int = Field(ge=1, le=10)
    seating: str = "indoor"
    notes: list[str] = Field(default_factory=list)


@pytest.mark.anyio
async def test_elicit_with_a_pydantic_model_returns_the_model_with_its_defaults() -> None:
    server = Server("booking")
    seen: list[Any] = []

    @server.tool()
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", Booking)
        seen.append(answer)
        return "ok"

    async with connect(
        server, elicitation=lambda params: {"action": "accept", "content": {"guests": 3}}
    ) as client:
        await client.call_tool("book")
    answer = seen[0]
    assert answer.value == Booking(guests=3, seating="indoor", notes=[])
    assert answer.content == {"guests": 3, "seating": "indoor", "notes": []}


@pytest.mark.anyio
async def test_a_declined_model_elicitation_has_no_value() -> None:
    server = Server("booking")
    seen: list[Any] = []

    @server.tool()
    async def book(ctx: Context) -> str:
        seen.append(await ctx.elicit("How many?", Booking))
        return "ok"

    async with connect(server, elicitation=lambda params: {"action": "decline"}) as client:
        await client.call_tool("book")
    assert (seen[0].action, seen[0].content, seen[0].value) == ("decline", None, None)
