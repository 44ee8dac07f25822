"""What a new user meets first (issue 31, items 1-3): a server file given to the client commands, a server
file that fails to load, and prints at import under stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
PLAIN = """from mcpkit import Server
import sys
print("hello at import")
server = Server("plain")


@server.tool()
def hi() -> str:
    return "hi " + " ".join(sys.argv[1:])
"""


def mcpkit(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )


def test_a_server_file_without_a_main_block_is_served_the_way_mcpkit_serve_serves_it(tmp_path: Path) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN)
    called = mcpkit("call", str(plain), "hi")
    assert (called.returncode, called.stdout) == (0, "hi \n"), called.stderr
    listed = mcpkit("list", str(plain), "--json")
    assert [t["name"] for t in orjson.loads(listed.stdout)] == ["hi"]
    with_args = mcpkit("call", f"{plain}:server --db x", "hi")
    assert (with_args.returncode, with_args.stdout) == (0, "hi --db x\n"), with_args.stderr


def test_a_server_file_with_a_main_block_runs_as_its_author_wrote_it(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    main = '\n\nif __name__ == "__main__":\n    server.tool(name="from_main")(lambda: "main")\n'
    main += "    server.run()\n"
    script.write_text(PLAIN + main)
    listed = mcpkit("list", f"{script} --flag", "--json")
    assert [t["name"] for t in orjson.loads(listed.stdout)] == ["hi", "from_main"], listed.stderr
    called = mcpkit("call", f"{script} --flag", "hi")
    assert called.stdout == "hi --flag\n"  # sys.argv as `python script.py --flag` gives it


def _load_failure(tmp_path: Path, body: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    bad = tmp_path / "bad.py"
    bad.write_text(body)
    return str(bad), mcpkit("serve", str(bad))


def test_a_syntax_error_shows_the_users_line_and_exits_4(tmp_path: Path) -> None:
    bad, done = _load_failure(tmp_path, "x = 1\ndef (:\n")
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        f'  File "{bad}", line 2',
        "    def (:",
        "        ^",
        "SyntaxError: invalid syntax",
        f"mcpkit: {bad} failed to load; fix the error above and run again",
    ]


def test_an_import_error_shows_only_the_users_frames_and_exits_4(tmp_path: Path) -> None:
    bad, done = _load_failure(tmp_path, "import os\nimport nothere_zz\n")
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{bad}", line 2, in <module>',
        "    import nothere_zz",
        "ModuleNotFoundError: No module named 'nothere_zz'",
        f"mcpkit: {bad} failed to load; fix the error above and run again",
    ]


def test_a_failing_factory_shows_its_frame_and_exits_4(tmp_path: Path) -> None:
    bad, done = _load_failure(tmp_path, "def create_server():\n    raise RuntimeError('no database')\n")
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{bad}", line 2, in create_server',
        "    raise RuntimeError('no database')",
        "RuntimeError: no database",
        f"mcpkit: create_server() in {bad} failed; fix the error above and run again",
    ]
    assert "mcpkit/" not in done.stderr.replace(f"{bad}", "")


def test_serve_check_loads_the_server_and_exits_0(tmp_path: Path) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN)
    done = mcpkit("serve", str(plain), "--check")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.splitlines() == ["hello at import", f"mcpkit: {plain} loads"]


def test_prints_at_import_go_to_stderr_under_stdio_serve(tmp_path: Path) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN + "import os\nos.system('echo from a child')\n")
    done = mcpkit("serve", str(plain), stdin="")  # stdin at EOF: serves nothing, leaves
    assert done.returncode == 0 and done.stdout == ""
    assert "hello at import" in done.stderr and "from a child" in done.stderr
