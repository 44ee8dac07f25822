"""The inspector's HTTP API, driven as the page drives it, against real mcpkit servers over stdio and HTTP."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.harness import EVERYTHING, HOSTILE, Inspector, http_server, inspector

STDIO = f"{sys.executable} {EVERYTHING}"


@pytest.fixture(scope="module")
def stdio() -> Iterator[Inspector]:
    with inspector(STDIO) as found:
        yield found


def test_the_page_shows_the_connected_server_its_era_and_version(stdio: Inspector) -> None:
    state = stdio.result("state")
    assert state["connected"] and state["serverInfo"]["name"] == "mcpkit-everything"
    assert state["protocol"] == "2026-07-28" and state["stateless"] is True
    assert "tools" in state["capabilities"]


def test_tools_are_listed_and_called_with_progress_on_the_event_stream(stdio: Inspector) -> None:
    names = {tool["name"] for tool in stdio.result("list", {"kind": "tools"})}
    assert {"echo", "add", "slow", "media"} <= names
    result = stdio.result("call", {"name": "slow", "arguments": {"seconds": 0.2}, "callId": "p1"})
    assert result["content"][0]["text"] == "waited 0.2 seconds"
    progress = [e for e in stdio.events('"callId":"p1","progress":10') if e["kind"] == "progress"]
    assert progress[-1]["callId"] == "p1" and progress[-1]["progress"] == 10


def test_structured_content_and_every_content_type_come_back_whole(stdio: Inspector) -> None:
    assert stdio.result("call", {"name": "add", "arguments": {"a": 2, "b": 40}})["structuredContent"] == {
        "result": 42
    }
    kinds = [block["type"] for block in stdio.result("call", {"name": "media"})["content"]]
    assert kinds == ["text", "image", "audio", "resource_link", "resource"]


def test_resources_templates_with_completion_and_prompts(stdio: Inspector) -> None:
    assert "demo://readme" in {r["uri"] for r in stdio.result("list", {"kind": "resources"})}
    assert stdio.result("read", {"uri": "demo://notes/7"})["contents"][0]["text"] == "Note number 7"
    ref = {"type": "ref/resource", "uri": "demo://notes/{note_id}"}
    assert "12" in stdio.result("complete", {"ref": ref, "argument": "note_id", "value": "1"})["values"]
    got = stdio.result("prompt", {"name": "greet", "arguments": {"name": "Ann", "style": "pirate"}})
    assert got["messages"][0]["content"]["text"] == "Write a pirate greeting for Ann."


def test_the_message_log_shows_both_directions_and_server_logs(stdio: Inspector) -> None:
    stdio.result("call", {"name": "log_levels"})
    events = stdio.events('"kind":"log","params":{"level":"emergency"')
    directions = {e["direction"] for e in events if e["kind"] == "message"}
    assert directions == {"in", "out"}
    assert any(e["kind"] == "log" and e["params"]["level"] == "warning" for e in events)


def test_an_elicitation_waits_for_the_page_and_takes_its_answer(stdio: Inspector) -> None:
    import threading

    outcome: dict[str, object] = {}
    call = threading.Thread(
        target=lambda: outcome.update(
            stdio.result("call", {"name": "book_table", "arguments": {"restaurant": "Zum"}})
        )
    )
    call.start()
    ask = [e for e in stdio.events('"kind":"ask"') if e["kind"] == "ask"][-1]
    assert ask["params"]["requestedSchema"]["properties"]["guests"]["type"] == "integer"
    answer = {"action": "accept", "content": {"guests": 3, "confirm": True}}
    assert stdio.act("answer", {"id": ask["id"], "result": answer}).status_code == 200
    call.join(30)
    assert outcome["content"] == [{"type": "text", "text": "Booked Zum for 3."}]


def test_a_sampling_request_is_answered_by_hand(stdio: Inspector) -> None:
    import threading

    answers: list[object] = []
    call = threading.Thread(
        target=lambda: answers.append(stdio.act("call", {"name": "summarize", "arguments": {"topic": "x"}}))
    )
    call.start()
    ask = stdio.events(lambda e: e["kind"] == "ask" and "Summarise x " in str(e["params"]))[-1]
    reply = {"role": "assistant", "content": {"type": "text", "text": "x, briefly"}, "model": "human"}
    stdio.result("answer", {"id": ask["id"], "result": reply})
    call.join(30)
    assert answers[0].json()["result"]["content"][0]["text"] == "x, briefly"  # type: ignore[attr-defined]


def test_a_running_call_is_cancelled_from_the_page(stdio: Inspector) -> None:
    import threading

    responses: list[object] = []
    body = {"name": "slow", "arguments": {"seconds": 30}, "callId": "long"}
    call = threading.Thread(target=lambda: responses.append(stdio.act("call", body)))
    call.start()
    stdio.events('"callId":"long"')  # the first progress: the call runs
    assert stdio.result("cancel", {"callId": "long"}) == {"cancelled": True}
    call.join(10)
    assert not call.is_alive() and responses[0].status_code == 409  # type: ignore[attr-defined]
    assert any(
        e["kind"] == "message" and e["message"].get("method") == "notifications/cancelled"
        for e in stdio.events('"notifications/cancelled"')
    )


def test_roots_set_in_the_page_are_what_the_server_lists(stdio: Inspector) -> None:
    roots = [{"uri": "file:///tmp/project", "name": "project"}]
    stdio.result("roots", {"roots": roots})
    got = stdio.result("call", {"name": "list_client_roots"})
    assert got["structuredContent"] == {"result": ["file:///tmp/project"]}


def test_a_tool_runs_as_a_task_and_the_server_stderr_is_in_the_log() -> None:
    with inspector(f"{sys.executable} {HOSTILE}") as found:
        assert any(e["kind"] == "stderr" for e in found.events('"line":"hostile server: starting"'))
        started = found.result("call", {"name": "long_job", "arguments": {"seconds": 30}, "task": True})
        task_id = started["task"]["taskId"]
        assert found.result("task", {"taskId": task_id, "op": "get"})["status"] == "working"
        assert found.result("task", {"taskId": task_id, "op": "cancel"})["status"] == "cancelled"
        quick = found.result("call", {"name": "long_job", "arguments": {"seconds": 0.1}, "task": True})
        result = found.result("task", {"taskId": quick["task"]["taskId"], "op": "result"})
        assert result["content"][0]["text"] == "slept 0.1"


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_an_http_server_in_either_era_forced_from_the_page(era: str) -> None:
    with http_server() as url, inspector(url, "--era", era) as found:
        state = found.result("state")
        assert state["stateless"] is (era == "modern")
        assert (
            found.result("call", {"name": "echo", "arguments": {"text": "hi"}})["content"][0]["text"] == "hi"
        )
        again = found.result("connect", {"era": "handshake" if era == "modern" else "modern"})
        assert again["stateless"] is (era != "modern")


def test_an_unreachable_server_is_an_error_and_the_inspector_stays_up() -> None:
    with inspector(f"{sys.executable} {EVERYTHING}") as found:
        response = found.act("connect", {"target": "http://127.0.0.1:9/mcp"}, timeout=60)
        assert response.status_code == 502 and response.json()["error"]
        assert found.result("state")["connected"] is False
        assert found.result("connect", {"target": f"{sys.executable} {EVERYTHING}"})["connected"]


def test_a_page_that_reconnects_gets_the_events_after_the_last_it_saw(stdio: Inspector) -> None:
    import httpx
    import orjson

    url = f"{stdio.base}/api/events?token={stdio.token}"
    with httpx.stream("GET", url, headers={"last-event-id": "3"}, timeout=10) as stream:
        first = next(line for line in stream.iter_lines() if line.startswith("data: "))
    assert orjson.loads(first[6:])["seq"] == 4


def test_a_subscription_in_the_handshake_era_brings_updates_to_the_log() -> None:
    with inspector(STDIO, "--era", "handshake") as found:
        found.result("subscribe", {"uri": "demo://readme"})
        found.result("call", {"name": "touch", "arguments": {"uri": "demo://readme"}})
        updates = found.events('"method":"notifications/resources/updated"')
        assert updates[-1]["message"]["params"]["uri"] == "demo://readme"


def test_a_sampling_request_rejected_in_the_page_fails_the_call(stdio: Inspector) -> None:
    import threading

    answers: list[object] = []
    body = {"name": "summarize", "arguments": {"topic": "no"}}
    call = threading.Thread(target=lambda: answers.append(stdio.act("call", body)))
    call.start()
    ask = stdio.events(lambda e: e["kind"] == "ask" and "Summarise no " in str(e["params"]))[-1]
    stdio.result("answer", {"id": ask["id"], "error": "The user rejected the sampling request"})
    call.join(30)
    # 2026-07-28: the rejection ends the call's input-required round in the client, so the call fails
    response = answers[0]
    assert response.status_code == 502  # type: ignore[attr-defined]
    assert response.json() == {  # type: ignore[attr-defined]
        "error": "The user rejected the sampling request",
        "errorCode": -1,
        "errorData": None,
    }


def test_a_server_named_in_a_client_config_is_found_with_its_env(tmp_path: Path) -> None:
    """`mcpkit inspect NAME`, NAME a server in Claude Desktop's config ($XDG_CONFIG_HOME/Claude)."""
    config = tmp_path / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir()
    entry = {"command": sys.executable, "args": [str(HOSTILE)], "env": {"HOSTILE_NOTE": "from the config"}}
    config.write_text(json.dumps({"mcpServers": {"hostile-demo": entry}}))
    with inspector("hostile-demo", env={"XDG_CONFIG_HOME": str(tmp_path)}) as found:
        assert found.result("state")["serverInfo"]["version"] == "1.0"
        assert found.events('"line":"hostile server: starting (from the config)"')


def test_a_name_no_config_has_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess

    from inspector.harness import ENV

    command = [sys.executable, "-m", "mcpkit.cli", "inspect", "no-such-server", "--no-browser"]
    env = {**ENV, "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "no such command: 'no-such-server'" in done.stderr
