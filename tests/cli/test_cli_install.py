"""`mcpkit install`: each client's config file and format, written into temporary homes and projects;
other entries kept, a backup made, a config it cannot read refused unchanged, and the entry it writes
starting a server that answers."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTES = """from mcpkit import Server

server = Server("notes")


@server.tool()
def hello() -> str:
    return "hi"
"""


class Places:
    def __init__(self, tmp_path: Path) -> None:
        self.home, self.config, self.project = tmp_path / "home", tmp_path / "config", tmp_path / "project"
        for directory in (self.home, self.config, self.project):
            directory.mkdir()
        self.server = self.project / "notes.py"
        self.server.write_text(NOTES)

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HOME": str(self.home)}
        env["XDG_CONFIG_HOME"] = str(self.config)
        return env

    def install(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcpkit.cli", "install", *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )


@pytest.fixture
def places(tmp_path: Path) -> Places:
    return Places(tmp_path)


# Where each client keeps its servers (Linux paths), under which key, and whether entries carry "type".
CLIENTS = {
    "claude-desktop": ("config/Claude/claude_desktop_config.json", "mcpServers", False),
    "claude-code": ("project/.mcp.json", "mcpServers", True),
    "cursor": ("home/.cursor/mcp.json", "mcpServers", False),
    "vscode": ("project/.vscode/mcp.json", "servers", True),
}


@pytest.mark.skipif(sys.platform != "linux", reason="the default paths checked are Linux's")
@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_gets_its_documented_format(places: Places, client: str, tmp_path: Path) -> None:
    done = places.install(
        client, "notes.py", "--env", "API_KEY=s3cret", "--env", "MODE=a=b", "--", "--db", "x"
    )
    where, key, typed = CLIENTS[client]
    path = tmp_path / where
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("mcpkit: added 'notes' in ") and str(path) in done.stdout
    entry = json.loads(path.read_text())[key]["notes"]
    expected = {
        "command": sys.executable,
        "args": ["-m", "mcpkit", "serve", str(places.server), "--", "--db", "x"],
        "env": {"API_KEY": "s3cret", "MODE": "a=b"},
    }
    assert entry == ({"type": "stdio", **expected} if typed else expected)
    assert not path.with_name(path.name + ".bak").exists()  # nothing was there to back up


def test_existing_entries_are_kept_and_the_old_file_backed_up(places: Places) -> None:
    path = places.project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    before = '{"inputs": [{"id": "key"}], "servers": {"other": {"type": "http", "url": "https://x.example"}}}'
    path.write_text(before)
    done = places.install("vscode", "notes.py", "--name", "my notes")
    assert done.returncode == 0, done.stderr
    config = json.loads(path.read_text())
    assert config["inputs"] == [{"id": "key"}]
    assert list(config["servers"]) == ["other", "my notes"]
    assert config["servers"]["other"] == {"type": "http", "url": "https://x.example"}
    assert path.with_name("mcp.json.bak").read_text() == before
    again = places.install("vscode", "notes.py", "--name", "my notes")
    assert again.stdout.startswith("mcpkit: replaced 'my notes'")
    assert list(json.loads(path.read_text())["servers"]) == ["other", "my notes"]


NOT_AN_OBJECT = "{path}: expected a JSON object with 'mcpServers' an object; nothing was changed"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"mcpServers": {"a": 1,}}',
            "{path} is not valid JSON (line 1 column 24: Expecting property name enclosed in double quotes); "
            "fix it or move it away, nothing was changed",
        ),
        ('["a list"]', "{path}: expected a JSON object with 'mcpServers' an object; nothing was changed"),
        (
            '{"mcpServers": []}',
            "{path}: expected a JSON object with 'mcpServers' an object; nothing was changed",
        ),
    ],
)
def test_a_config_it_cannot_read_is_refused_unchanged(places: Places, content: str, message: str) -> None:
    path = places.project / ".mcp.json"
    path.write_text(content)
    done = places.install("claude-code", "notes.py")
    assert (done.returncode, done.stderr) == (2, f"mcpkit: {message.format(path=path)}\n")
    assert path.read_text() == content
    assert not (places.project / ".mcp.json.bak").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cursor", "missing.py"], "mcpkit: no such file: missing.py (install serves a file.py[:NAME])"),
        (["cursor", "notes.py", "--env", "NOEQUALS"], "mcpkit: --env 'NOEQUALS' is not KEY=VALUE"),
    ],
)
def test_bad_arguments_are_one_line(places: Places, args: list[str], message: str) -> None:
    done = places.install(*args, "--config-path", str(places.home / "c.json"))
    assert (done.returncode, done.stderr.strip()) == (2, message)
    assert not (places.home / "c.json").exists()


def test_the_entry_written_starts_a_server_that_answers(places: Places) -> None:
    config_path = places.home / "claude.json"
    done = places.install("claude-desktop", "notes.py:server", "--config-path", str(config_path))
    assert done.returncode == 0, done.stderr
    entry = json.loads(config_path.read_text())["mcpServers"]["notes"]
    command = shlex.join([entry["command"], *entry["args"]])
    listed = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", "list", command, "--json"],
        cwd=places.home,  # a client starts it from anywhere
        env=places.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in orjson.loads(listed.stdout)] == ["hello"]


# Issue 31, item 9: a server that cannot start is not installed; names mcpkit picks are never followed.


@pytest.mark.parametrize(
    ("target", "code", "said"),
    [
        ("notes.py:nothere", 2, "mcpkit: {project}/notes.py has no attribute 'nothere'"),
        ("broken.py", 4, "SyntaxError: invalid syntax"),
    ],
)
def test_a_server_that_does_not_load_is_not_installed(
    places: Places, target: str, code: int, said: str
) -> None:
    (places.project / "broken.py").write_text("def (:\n")
    done = places.install("claude-code", target)
    config = places.project / ".mcp.json"
    lines = done.stderr.splitlines()
    assert done.returncode == code
    assert said.format(project=places.project) in lines
    assert lines[-1] == f"mcpkit: {target} does not load, so it was not installed; {config} is unchanged"
    assert not config.exists()


def test_links_planted_at_the_names_mcpkit_picks_are_not_followed(places: Places, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("precious\n")
    vscode = places.project / ".vscode"
    vscode.mkdir()
    (vscode / "mcp.json").write_text('{"servers": {}}\n')
    for planted in ("mcp.json.mcpkit-new", "mcp.json.bak"):
        (vscode / planted).symlink_to(outside)
    done = places.install("vscode", "notes.py")
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "precious\n"
    backup = vscode / "mcp.json.bak"
    assert not backup.is_symlink() and backup.read_text() == '{"servers": {}}\n'
    assert "notes" in json.loads((vscode / "mcp.json").read_text())["servers"]


@pytest.mark.parametrize("linked", [".vscode", ".vscode/mcp.json"])
def test_a_default_config_place_that_is_a_link_is_refused(
    places: Places, tmp_path: Path, linked: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mcp.json").write_text('{"servers": {}}\n')
    if linked == ".vscode":
        (places.project / ".vscode").symlink_to(elsewhere)
    else:
        (places.project / ".vscode").mkdir()
        (places.project / linked).symlink_to(elsewhere / "mcp.json")
    done = places.install("vscode", "notes.py")
    assert done.returncode == 2
    assert done.stderr.startswith(f"mcpkit: {places.project / linked} is a link to ")
    assert (elsewhere / "mcp.json").read_text() == '{"servers": {}}\n'


def test_the_configs_mode_is_kept(places: Places) -> None:
    config = places.project / ".mcp.json"
    config.write_text('{"mcpServers": {"other": {"command": "x", "env": {"API_KEY": "secret"}}}}\n')
    config.chmod(0o600)
    done = places.install("claude-code", "notes.py")
    assert done.returncode == 0, done.stderr
    assert config.stat().st_mode & 0o777 == 0o600
    assert (places.project / ".mcp.json.bak").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in places.project.iterdir()) == [".mcp.json", ".mcp.json.bak", "notes.py"]
