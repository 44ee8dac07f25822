"""The `mcpkit` command, driven as a subprocess against the everything example over stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = f"{sys.executable} {ROOT / 'examples' / 'everything.py'}"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


def test_call_coerces_arguments_by_the_input_schema_and_prints_json() -> None:
    done = mcpkit("call", SERVER, "add", "a=2", "b=40", "--json")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"] == {"result": 42}


def test_a_tool_error_exits_1() -> None:
    done = mcpkit("call", SERVER, "fail", "message=nope")
    assert done.returncode == 1 and "nope" in done.stdout


def test_an_unknown_tool_exits_2_with_the_closest_names() -> None:
    done = mcpkit("call", SERVER, "ad", "a=1")
    assert done.returncode == 2 and "did you mean add" in done.stderr


def test_arguments_that_break_the_schema_name_the_field() -> None:
    done = mcpkit("call", SERVER, "add", "a=x", "b=1")
    assert done.returncode == 1 and "'a'" in done.stdout


def test_list_read_prompt_and_ping() -> None:
    assert "weather" in mcpkit("list", SERVER).stdout
    assert "demo://notes/{note_id}" in mcpkit("list", SERVER, "templates").stdout
    assert mcpkit("read", SERVER, "demo://notes/3").stdout.strip() == "Note number 3"
    assert (
        "Write a pirate greeting for Ann."
        in mcpkit("prompt", SERVER, "greet", "name=Ann", "style=pirate").stdout
    )
    assert mcpkit("ping", SERVER).stdout.strip() == "pong"


def test_progress_is_shown_on_stderr() -> None:
    done = mcpkit("call", SERVER, "slow", "seconds=0.2")
    assert done.returncode == 0 and "[10/10]" in done.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [(("read", SERVER, "demo://missing"), 2), (("ping", "/no/such/server"), 2), (("call",), 2)],
)
def test_failures_exit_with_their_codes(args: tuple[str, ...], code: int) -> None:
    assert mcpkit(*args).returncode == code


def test_version_and_help() -> None:
    assert mcpkit("--version").stdout.strip().startswith("mcpkit ")
    assert "call" in mcpkit("--help").stdout
    assert mcpkit("call", "--help").returncode == 0


def test_serve_runs_a_server_file_over_stdio_and_http() -> None:
    target = str(ROOT / "examples" / "everything.py")
    done = mcpkit("call", f"{sys.executable} -m mcpkit.cli serve {target}", "add", "a=1", "b=1", "--json")
    assert orjson.loads(done.stdout)["structuredContent"] == {"result": 2}
    import socket
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "mcpkit.cli", "serve", target, "--http", "--port", str(port)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        answer = None
        while time.monotonic() < deadline:
            answer = mcpkit("call", f"http://127.0.0.1:{port}/mcp", "add", "a=20", "b=22", "--json")
            if answer.returncode == 0:
                break
            time.sleep(0.2)
        assert answer is not None and orjson.loads(answer.stdout)["structuredContent"] == {"result": 42}
    finally:
        server.terminate()
        server.wait(10)


def test_elicitation_is_asked_at_the_terminal() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", "call", SERVER, "book_table", "restaurant=Noma"],
        input="3\ny\ny\n",
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Booked Noma for 3."
    assert "Book a table at Noma?" in done.stderr


def test_a_declined_terminal_form_is_declined() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", "call", SERVER, "book_table", "restaurant=Noma"],
        input="2\ny\nn\n",
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert done.stdout.strip() == "No booking made (decline)."


def test_sampling_is_refused_clearly_unless_a_sampling_command_is_given(tmp_path: Path) -> None:
    # In the 2026-07-28 era (the CLI's auto mode ends there with mcpkit) this is -32021, a protocol error.
    refused = mcpkit("call", SERVER, "summarize", "topic=tides")
    assert refused.returncode == 3 and "-32021" in refused.stderr and "--sampling CMD" in refused.stderr
    llm = tmp_path / "llm.py"
    llm.write_text(
        "import json, sys\nparams = json.load(sys.stdin)\n"
        "print(json.dumps({'role': 'assistant', 'model': 'script', "
        "'content': {'type': 'text', 'text': 'tokens: %d' % params['maxTokens']}}))\n"
    )
    answered = mcpkit("call", SERVER, "summarize", "topic=tides", "--sampling", f"{sys.executable} {llm}")
    assert answered.returncode == 0 and answered.stdout.strip() == "tokens: 100"


def test_a_server_that_dies_at_start_is_a_connection_error_with_its_stderr() -> None:
    crash = f"{sys.executable} -c \"import sys; print('boom: no config', file=sys.stderr); sys.exit(3)\""
    done = mcpkit("ping", crash)
    assert done.returncode == 3
    assert "boom: no config" in done.stderr and "the server exited" in done.stderr


HOSTILE = f"{sys.executable} {ROOT / 'tests' / 'cli' / 'hostile_server.py'}"
NAME = "evil\x1b]52;c;cm0gLXJmIH4K\x07"  # only its start: the CLI matches the full name from tools/list


def _raw_mcpkit(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, env=ENV, timeout=60
    )


def _no_terminal_controls(output: bytes) -> None:
    text = output.decode().replace("\r[", "[")  # the CLI's own progress line rewrites itself
    controls = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    assert controls == [], f"raw controls reach the terminal: {controls!r}"


@pytest.mark.parametrize(
    "args",
    [
        ("list", HOSTILE),
        ("list", HOSTILE, "--json"),
        ("prompt", HOSTILE, "p"),
        ("read", HOSTILE, "x://y"),
        ("read", HOSTILE, "x://y", "--json"),
        ("call", HOSTILE, "nope"),
    ],
    ids=["list", "list-json", "prompt", "read", "read-json", "unknown-tool"],
)
def test_escape_sequences_a_server_sends_never_reach_the_terminal_raw(args: tuple[str, ...]) -> None:
    done = _raw_mcpkit(*args)
    assert done.stdout or done.stderr
    _no_terminal_controls(done.stdout)
    _no_terminal_controls(done.stderr)


def test_a_hostile_tool_call_shows_its_result_log_and_progress_escaped() -> None:
    listed = orjson.loads(_raw_mcpkit("list", HOSTILE, "--json").stdout)
    name = listed[0]["name"]
    assert name.startswith(NAME)  # --json keeps the value itself, only its encoding is escaped
    for extra in ((), ("--json",)):
        done = _raw_mcpkit("call", HOSTILE, name, *extra)
        assert done.returncode == 0, done.stderr
        _no_terminal_controls(done.stdout)
        _no_terminal_controls(done.stderr)
        assert b"\\x1b]52;c;" in done.stderr  # the log line, visible but inert
    plain = _raw_mcpkit("call", HOSTILE, name).stdout.decode()
    assert plain.startswith("result\\x1b]52;c;") and plain.endswith("\nsecond line\n")


def test_a_hostile_error_message_is_escaped() -> None:
    listed = orjson.loads(_raw_mcpkit("list", HOSTILE, "--json").stdout)
    done = _raw_mcpkit("call", HOSTILE, listed[0]["name"] + "x")
    assert done.returncode == 2  # unknown tool; its close match is the hostile name
    _no_terminal_controls(done.stderr)


def test_bad_json_in_args_and_a_misspelt_key_are_one_line_each() -> None:
    bad_json = mcpkit("call", SERVER, "add", "--args", "{bad")
    assert bad_json.returncode == 2 and bad_json.stderr.startswith("mcpkit: --args is not JSON:")
    assert len(bad_json.stderr.strip().splitlines()) == 1
    misspelt = mcpkit("call", SERVER, "add", "a=1", "bb=2")
    assert misspelt.returncode == 2
    assert misspelt.stderr.strip() == "mcpkit: the tool has no argument 'bb' (did you mean b?)"


def test_serve_says_in_one_line_what_it_cannot_serve() -> None:
    commerce = str(ROOT / "examples" / "commerce" / "server.py")
    needs = mcpkit("serve", f"{commerce}:build_server")
    assert (
        needs.stderr.strip()
        == "mcpkit: build_server() needs db_path: give a Server, or a factory taking none"
    )
    missing = mcpkit("serve", "no_such_module:server")
    assert missing.returncode == 2 and missing.stderr.strip().startswith("mcpkit: no module 'no_such_module'")


def test_a_missing_extra_is_named_with_its_pip_command(tmp_path: Path) -> None:
    blocked = tmp_path / "uvicorn"  # as if the http extra were not installed
    blocked.mkdir()
    (blocked / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'uvicorn'\", name='uvicorn')\n"
    )
    env = {**ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ENV['PYTHONPATH']}"}
    command = [
        sys.executable,
        "-m",
        "mcpkit.cli",
        "serve",
        str(ROOT / "examples" / "everything.py"),
        "--http",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mcpkit: this needs the http extra: pip install 'mcpkit[http]' (No module named 'uvicorn')"
    ]
