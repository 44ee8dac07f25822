"""The code blocks of the documentation (README.md and docs/**/*.md), as tests/test_docs.py runs them.

A fenced block is read with what stands around it:
- a `<!-- docs-test: prelude ... -->` comment just before a ```python block is run first, unseen by the reader
  (what a reader has at hand there: a running server's URL, a signing key);
- `<!-- docs-test: env KEY=VALUE ... -->` before a file block sets the environment the file runs with;
- `<!-- docs-test: run -->` before a ```sh block runs its commands beside the page's files, not just checks;
  `<!-- docs-test: run URL=FILE -->` runs them in the checkout, the server at URL replaced by FILE over stdio;
- a ```text title="Output" block just after a python block (or a run shell block) is what it prints, exactly.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)(?P<attrs>[^\n`]*)$")
DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(?P<kind>\w+)(?P<body>.*?)-->\s*$", re.S)
FILE_NAME = re.compile(r"^# ([\w/-]+\.py)\n")


@dataclass
class Block:
    page: Path
    line: int  # 1-based, of the opening fence
    lang: str
    code: str
    title: str = ""
    prelude: str = ""
    env: dict[str, str] = field(default_factory=dict)
    run: bool = False  # a shell block whose commands are run
    servers: dict[str, str] = field(
        default_factory=dict
    )  # run: URL -> the checkout's server file standing in
    output: str | None = None  # what the next ```text title="Output" block says it prints

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def file_name(self) -> str | None:
        """The file a ```python block is, when its first line names one (`# notes.py`)."""
        found = FILE_NAME.match(self.code) if self.lang == "python" else None
        return found.group(1) if found else None


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _directive(before: list[str]) -> tuple[str, str] | None:
    """The docs-test comment ending just above a fence (blank lines between allowed)."""
    text = "\n".join(before).rstrip()
    if not text.endswith("-->"):
        return None
    start = text.rfind("<!--")
    found = DIRECTIVE.match(text[start:])
    return (found["kind"], found["body"]) if found else None


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent = opening["indent"]
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = "\n".join(line[len(indent) :] for line in lines[i + 1 : end]) + "\n"
        title = re.search(r'title="([^"]*)"', opening["attrs"])
        block = Block(page, i + 1, opening["lang"], body, title[1] if title else "")
        directive = _directive(lines[max(0, i - 40) : i])
        if directive and directive[0] == "prelude":
            block.prelude = directive[1].strip("\n") + "\n"
        elif directive and directive[0] == "env":
            block.env = dict(pair.split("=", 1) for pair in directive[1].split())
        elif directive and directive[0] == "run":
            block.run = True
            block.servers = dict(pair.split("=", 1) for pair in directive[1].split())
        if (
            block.lang == "text"
            and block.title == "Output"
            and found
            and (found[-1].lang == "python" or found[-1].run)
        ):
            found[-1].output = body
        found.append(block)
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def named_files(page: Path) -> dict[str, Block]:
    return {name: block for block in blocks(page) if (name := block.file_name)}


def commands(code: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, split at ; && || |,
    leading VAR=value assignments left out."""
    joined = re.sub(r"\\\n", " ", code)
    found: list[list[str]] = []
    for line in joined.splitlines():
        current: list[str] = []
        for token in shlex.split(line, comments=True):
            if token in {";", "&&", "||", "|"}:
                found.append(current)
                current = []
            elif current or not re.match(r"^[A-Z_]+=", token):
                current.append(token)
        found.append(current)
    return [command for command in found if command]


def extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])
