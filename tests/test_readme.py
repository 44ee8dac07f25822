"""The README's Python examples, run exactly as printed: every ```python block whose first line names a file
(`# notes.py`) is saved under that name in a temporary directory, and the clients are run from another one,
as a reader who copied them would (not from the checkout root)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMED_BLOCK = re.compile(r"```python\n# (\w+\.py)\n(.*?)```", re.S)


def readme_files() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return {name: f"# {name}\n{body}" for name, body in NAMED_BLOCK.findall(text)}


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    app.mkdir()
    for name, code in readme_files().items():
        (app / name).write_text(code, encoding="utf-8")
    return app


def run_from_elsewhere(script: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}  # this tree's mcpkit, as if installed
    return subprocess.run(
        [sys.executable, str(script)], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_readme_names_its_runnable_examples() -> None:
    assert set(readme_files()) >= {"notes.py", "client.py", "sync_client.py"}


def test_the_async_client_example_talks_to_the_server_example(copied: Path, tmp_path: Path) -> None:
    done = run_from_elsewhere(copied / "client.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['add_note']", "log: stored todo", "stored 8 characters", "buy milk"]


def test_the_sync_client_example_talks_to_the_server_example(copied: Path, tmp_path: Path) -> None:
    done = run_from_elsewhere(copied / "sync_client.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["buy milk"]


def test_the_server_example_is_served_by_mcpkit_serve(copied: Path, tmp_path: Path) -> None:
    server = f"{sys.executable} -m mcpkit.cli serve {copied / 'notes.py'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", "call", server, "add_note", "name=a", "text=bc"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "stored 2 characters\n"), done.stderr
