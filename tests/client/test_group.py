"""ClientGroup against a config of real servers: mcpkit servers over stdio and HTTP, the TypeScript
reference server-everything, an official-SDK server, one that never starts; one killed and restarted."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import peers
from cluster.parts import in_ci
from mcpkit.client.group import ClientGroup, Filters, HttpServer, ServerUnavailable, StdioServer
from mcpkit.client.group.names import NamingError
from mcpkit.client.group.sync import open_group
from mcpkit.client.result_cache import ResultCache
from mcpkit.protocol.errors import LocalError
from mcpkit.transports.http_client.backoff import Backoff

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
SRC = {"PYTHONPATH": str(ROOT / "src")}
GROUP_SERVER = str(ROOT / "tests" / "client" / "group_server.py")
SDK_SERVER = str(ROOT / "tests" / "interop" / "sdk_server.py")
EVERYTHING = Path(
    os.environ.get(
        "MCPKIT_EVERYTHING_SERVER",
        ROOT / ".interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    )
)
FAST = Backoff(floor_ms=50, max_ms=300)
JSON = dict[str, Any]


def mcpkit_stdio(name: str, **extra: Any) -> JSON:
    return {"command": sys.executable, "args": [GROUP_SERVER, name], "env": SRC, **extra}


def reference_server() -> JSON:
    if not EVERYTHING.is_file() or shutil.which("node") is None:
        if os.environ.get("MCPKIT_CI"):
            pytest.fail(f"server-everything is not installed at {EVERYTHING}")
        pytest.skip(f"server-everything is not installed at {EVERYTHING}")
    return {"command": "node", "args": [str(EVERYTHING), "stdio"]}


class HttpServerProcess:
    """group_server.py over HTTP on a fixed port, which the test may kill and start again."""

    def __init__(self, name: str) -> None:
        self.name, self.port = name, peers.free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, GROUP_SERVER, self.name, "--http", "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, env={**os.environ, **SRC}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not listen within 20 s"
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def http_server() -> Iterator[HttpServerProcess]:
    server = HttpServerProcess("http")
    server.start()
    try:
        yield server
    finally:
        server.kill()


def real_config(http: HttpServerProcess) -> JSON:
    return {
        "mcpServers": {
            "stdio": mcpkit_stdio("stdio", tools={"deny": ["delete_*"]}),
            "http": {"type": "http", "url": http.url},
            "ref": reference_server(),
            "sdk": {"command": sys.executable, "args": [SDK_SERVER]},
            "never": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(7)"]},
        },
        "mcpkit": {"tools": {"deny": ["http.delete_everything", "sdk.ask_llm"]}},
    }


async def text_of(result: JSON) -> str:
    return str(result["content"][0]["text"])


async def test_a_config_of_real_servers_is_one_catalog_and_calls_go_to_their_server(
    http_server: HttpServerProcess,
) -> None:
    async with ClientGroup.from_config(real_config(http_server), backoff=FAST, wait=2) as group:
        status = group.status()
        assert {name: s["state"] for name, s in status.items()} == {
            "stdio": "ready",
            "http": "ready",
            "ref": "ready",
            "sdk": "ready",
            "never": "down",
        }
        assert status["never"]["failures"] >= 1
        names = [t["name"] for t in group.tools()]
        assert {"stdio.whoami", "http.whoami", "ref.get-sum", "ref.echo", "sdk.add", "sdk.echo"} <= set(names)
        assert not [
            n for n in names if n.startswith("never.") or "delete_everything" in n or n == "sdk.ask_llm"
        ]
        assert (await text_of(await group.call_tool("stdio.whoami"))).startswith("stdio ")
        assert (await text_of(await group.call_tool("http.whoami"))).startswith("http ")
        assert (await group.call_tool("sdk.add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        assert "5" in await text_of(await group.call_tool("ref.get-sum", {"a": 2, "b": 3}))
        with pytest.raises(LocalError, match=r"no tool 'stdio\.delete_everything'"):
            await group.call_tool("stdio.delete_everything")
        about = await group.read_resource("group://http/about")
        assert about["contents"][0]["text"] == "about http"
        note = await group.read_resource("group://stdio/notes/9")  # no server listed it: its template did
        assert note["contents"][0]["text"] == "note 9 of stdio"
        hello = await group.get_prompt("http.hello", {"who": "Ann"})
        assert hello["messages"][0]["content"]["text"] == "Hello Ann from http"
        found = [t["name"] for t in group.search("add two integers", 4)]
        assert {"stdio.add", "sdk.add"} <= set(found)


async def test_a_server_that_never_starts_is_retried_with_backoff_while_the_others_serve() -> None:
    servers = {
        "ok": StdioServer(sys.executable, (GROUP_SERVER, "ok"), SRC),
        "never": StdioServer(str(ROOT / "no-such-server")),
    }
    async with ClientGroup(servers, backoff=FAST, wait=0.2) as group:
        assert group.status()["ok"]["state"] == "ready"
        with anyio.fail_after(10):
            while group.status()["never"]["failures"] < 4:
                await anyio.sleep(0.05)
        assert "FileNotFoundError" in str(group.status()["never"]["error"])
        with pytest.raises(ServerUnavailable, match="'never' is down"):
            await group.call_tool("never.anything")
        assert (await group.call_tool("ok.add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}


async def test_a_slow_server_does_not_hold_up_the_group() -> None:
    servers = {
        "ok": StdioServer(sys.executable, (GROUP_SERVER, "ok"), SRC),
        "slow": StdioServer(sys.executable, ("-c", "import time; time.sleep(60)")),
    }
    start = time.monotonic()
    async with ClientGroup(servers, start_timeout=4, connect_timeout=60) as group:
        assert time.monotonic() - start < 20
        assert group.status()["ok"]["state"] == "ready" and group.status()["slow"]["state"] == "starting"
        assert [t["name"] for t in group.tools()][:1] == ["ok.whoami"]
    async with ClientGroup({"slow": servers["slow"]}, start_timeout=10, connect_timeout=1) as group:
        status = group.status()["slow"]
        assert status["state"] == "down" and status["error"] == "TimeoutError: no answer within 1s"


@pytest.mark.both_loops
async def test_a_stdio_server_killed_mid_call_is_restarted_and_the_call_is_not_retried() -> None:
    servers = {"victim": StdioServer(sys.executable, (GROUP_SERVER, "victim"), SRC)}
    async with ClientGroup(servers, backoff=FAST, wait=20) as group:
        first = await text_of(await group.call_tool("victim.whoami"))
        with pytest.raises(ServerUnavailable, match="may have run, so it is not retried"):
            await group.call_tool("victim.crash")
        second = await text_of(await group.call_tool("victim.whoami"))  # waits for the restart
        assert second.startswith("victim ") and second != first
        assert "victim.crash" in group.catalog.tools


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_an_http_server_killed_and_restarted_is_reconnected_and_a_read_is_retried(
    era: str,
    http_server: HttpServerProcess,
) -> None:
    servers = {"http": {"url": http_server.url}, "local": mcpkit_stdio("local")}
    options: JSON = {"era": era, "backoff": FAST, "wait": 30}
    async with ClientGroup.from_config({"mcpServers": servers}, **options) as group:

        async def restart_soon() -> None:
            await anyio.sleep(1)
            await anyio.to_thread.run_sync(http_server.start)

        first = await text_of(await group.call_tool("http.whoami"))
        http_server.kill()
        async with anyio.create_task_group() as tg:
            tg.start_soon(restart_soon)
            read = await group.read_resource("group://http/about")  # a read changes nothing: retried
        assert read["contents"][0]["text"] == "about http"
        second = await text_of(await group.call_tool("http.whoami"))
        assert second != first
        assert group.status()["local"]["state"] == "ready"
        http_server.kill()
        async with anyio.create_task_group() as tg:
            tg.start_soon(restart_soon)
            refused = await group.call_tool("http.add", {"a": 1, "b": 2})  # refused: it reached no server
        assert refused["structuredContent"] == {"result": 3}
        http_server.kill()
        await anyio.to_thread.run_sync(http_server.start)  # up at once; the group's session is unknown to it
        assert (await group.read_resource("group://http/about"))["contents"][0]["text"] == "about http"
        assert (await text_of(await group.call_tool("http.whoami"))).startswith("http ")


@pytest.mark.both_loops
@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_list_changed_from_a_server_refreshes_the_catalog_and_tells_the_user(
    era: str, http_server: HttpServerProcess
) -> None:
    told: list[int] = []
    servers = {"a": mcpkit_stdio("a"), "h": {"url": http_server.url}}
    options: JSON = {
        "era": era,
        "on_change": lambda g: told.append(len(g.tools())),
        "stderr": subprocess.DEVNULL,  # a stdio server's option, which the HTTP one does without
    }
    async with ClientGroup.from_config({"mcpServers": servers}, **options) as group:
        assert group.client("a").stateless is (era == "modern")
        before = len(told)
        for server in ("a", "h"):
            await group.call_tool(f"{server}.grow", {"name": "fresh"})
        with anyio.fail_after(10):
            while not {"a.fresh", "h.fresh"} <= set(group.catalog.tools):
                await group.changed()
        assert (await text_of(await group.call_tool("h.fresh"))) == "fresh from http"
        assert len(told) > before


async def test_one_server_options_override_the_group_ones() -> None:
    servers = {name: StdioServer(sys.executable, (GROUP_SERVER, name), SRC) for name in ("old", "new")}
    options: JSON = {"era": "modern", "server_options": {"old": {"era": "handshake"}}}
    async with ClientGroup(servers, **options) as group:
        assert (group.client("old").stateless, group.client("new").stateless) == (False, True)
        assert {"old.add", "new.add"} <= {t["name"] for t in group.tools()}


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_names_filters_and_collisions_hold_in_both_eras(
    era: str, http_server: HttpServerProcess
) -> None:
    servers = {"one": mcpkit_stdio("one"), "two": {"url": http_server.url}}
    options: JSON = {
        "era": era,
        "prefix": False,
        "collisions": "first",
        "filters": Filters.of(tools={"deny": ["crash", "grow", "touch", "delete_*"]}),
    }
    async with ClientGroup.from_config({"mcpServers": servers}, **options) as group:
        assert sorted(t["name"] for t in group.tools()) == ["add", "whoami"]
        assert (await text_of(await group.call_tool("whoami"))).startswith("one ")
        assert any("'whoami' is hidden by one's" in p for p in group.problems)
    async with ClientGroup.from_config({"mcpServers": servers}, era=era, prefix=False) as group:
        assert {"one.whoami", "two.whoami"} <= {t["name"] for t in group.tools()}  # collisions="prefix"
    async with ClientGroup.from_config({"mcpServers": servers}, era=era, separator="__") as group:
        assert (await text_of(await group.call_tool("two__whoami"))).startswith("http ")
    strict = ClientGroup.from_config({"mcpServers": servers}, era=era, prefix=False, collisions="error")
    with pytest.raises(NamingError, match="offered by more than one server"):
        async with strict:
            pass


async def test_search_tools_is_one_meta_tool_answering_with_definitions() -> None:
    servers = {"a": StdioServer(sys.executable, (GROUP_SERVER, "a"), SRC)}
    async with ClientGroup(servers, search_tool=True) as group:
        offered = group.tools()
        assert offered[0]["name"] == "search_tools" and len(offered) == 7
        result = await group.call_tool("search_tools", {"query": "add two integers", "limit": 2})
        found = result["structuredContent"]["tools"]
        assert found[0]["name"] == "a.add" and found[0]["inputSchema"]["required"] == ["a", "b"]
        assert (await group.call_tool("search_tools", {}))["isError"] is True
    async with ClientGroup(servers, search_tool="only") as group:
        assert [t["name"] for t in group.tools()] == ["search_tools"]
        found = await group.call_tool("search_tools", {"query": "which process answered"})
        assert found["structuredContent"]["tools"][0]["name"] == "a.whoami"
        assert (await text_of(await group.call_tool("a.whoami"))).startswith("a ")


def test_the_sync_facade_covers_the_group(http_server: HttpServerProcess) -> None:
    config = {"mcpServers": {"s": mcpkit_stdio("s"), "h": {"url": http_server.url}}}
    with open_group(config) as group:
        assert {"s.add", "h.add"} <= {t["name"] for t in group.tools()}
        assert group.call_tool("h.add", {"a": 4, "b": 5})["structuredContent"] == {"result": 9}
        assert group.search("which process answered", 1)[0]["name"] in ("s.whoami", "h.whoami")
        assert group.read_resource("group://s/about")["contents"][0]["text"] == "about s"
        assert group.status()["h"]["state"] == "ready"
    with pytest.raises(RuntimeError, match="closed"):
        group.tools()


async def test_public_results_are_shared_across_reconnects_and_groups_private_ones_are_not() -> None:
    """2026-07-28 server utilities "Caching": only a public result may be reused beyond its client."""
    servers = {"c": StdioServer(sys.executable, (GROUP_SERVER, "c"), SRC)}
    cache = ResultCache(max_entries=100, max_bytes=1 << 20)

    async def read(group: ClientGroup, kind: str) -> str:
        result = await group.read_resource(f"group://c/pid/{kind}")
        return str(result["contents"][0]["text"])

    async with ClientGroup(servers, era="modern", cache=cache, backoff=FAST, wait=20) as group:
        public, private = await read(group, "public"), await read(group, "private")
        assert public == private and len(cache) == 1
        with pytest.raises(ServerUnavailable):
            await group.call_tool("c.crash")
        assert await read(group, "public") == public  # from the shared cache: the process is new
        assert await read(group, "private") != private  # the new connection's client asked again
    async with ClientGroup(servers, era="modern", cache=cache) as other:
        assert await read(other, "public") == public
        assert await read(other, "private") != public


def test_the_shared_cache_is_bounded_in_entries_and_bytes() -> None:
    clock = [0.0]
    cache = ResultCache(max_entries=3, clock=lambda: clock[0], max_bytes=200)
    result = {"contents": [{"text": "x" * 50}], "ttlMs": 1000}
    for n in range(4):
        cache.put(("s", "resources/read", str(n).encode()), result)
    assert len(cache) == 2 and cache.size <= 200  # three would be over 200 bytes
    assert cache.get(("s", "resources/read", b"3")) is not None
    cache.put(("s", "resources/read", b"big"), {"contents": [{"text": "y" * 500}], "ttlMs": 1000})
    assert cache.get(("s", "resources/read", b"big")) is None  # larger than the whole bound
    clock[0] = 2.0
    assert cache.get(("s", "resources/read", b"3")) is None and len(cache) == 1


async def test_a_dead_server_is_found_by_its_pings_before_any_call(http_server: HttpServerProcess) -> None:
    servers = {"http": {"url": http_server.url}}
    async with ClientGroup.from_config({"mcpServers": servers}, ping_interval=0.2, backoff=FAST) as group:
        assert "http.whoami" in group.catalog.tools
        http_server.kill()
        with anyio.fail_after(10):
            while group.status()["http"]["state"] == "ready":
                await group.changed()
        assert group.tools() == []
        await anyio.to_thread.run_sync(http_server.start)
        with anyio.fail_after(20):
            while "http.whoami" not in group.catalog.tools:
                await group.changed()


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_resource_subscriptions_are_renewed_after_a_reconnect(era: str) -> None:
    heard: list[str] = []

    def on_notification(method: str, params: JSON) -> None:
        if method == "notifications/resources/updated":
            heard.append(params["uri"])

    servers = {"s": StdioServer(sys.executable, (GROUP_SERVER, "s"), SRC)}
    options: JSON = {"era": era, "backoff": FAST, "wait": 20, "on_notification": on_notification}
    async with ClientGroup(servers, **options) as group:
        await group.subscribe("group://s/about")
        await group.call_tool("s.touch", {"uri": "group://s/about"})
        with pytest.raises(ServerUnavailable):
            await group.call_tool("s.crash")
        await group.call_tool("s.touch", {"uri": "group://s/about"})  # a new process: told only if renewed
        with anyio.fail_after(10):
            while len(heard) < 2:
                await anyio.sleep(0.02)
        assert heard == ["group://s/about", "group://s/about"]


async def test_an_http_server_gets_the_auth_its_factory_makes_and_a_stdio_one_none(
    http_server: HttpServerProcess,
) -> None:
    class Counting(httpx.Auth):
        def __init__(self) -> None:
            self.requests = 0

        def auth_flow(self, request: httpx.Request) -> Any:
            self.requests += 1
            request.headers["Authorization"] = "Bearer group-test"
            yield request

    made: dict[str, Counting] = {}

    def auth(name: str, spec: HttpServer) -> Counting:
        assert spec.url == http_server.url
        return made.setdefault(name, Counting())

    servers = {"h": {"url": http_server.url, "oauth": True}, "s": mcpkit_stdio("s")}
    async with ClientGroup.from_config({"mcpServers": servers}, auth=auth) as group:
        await group.call_tool("h.whoami")
        assert list(made) == ["h"] and made["h"].requests >= 2


FASTMCP_PYTHON = ROOT / "benchmarks" / ".venv-fastmcp" / "bin" / "python"  # benchmarks/launchers.py makes it
FASTMCP_SERVER = '''
from fastmcp import FastMCP

server = FastMCP("group-fastmcp")


@server.tool
def shout(text: str) -> str:
    """Say the text in capitals."""
    return text.upper()


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


server.run("stdio", show_banner=False)
'''


async def test_a_fastmcp_server_joins_the_group_beside_an_mcpkit_one(tmp_path: Path) -> None:
    """fastmcp pins its own `mcp`, so it runs from its own venv (benchmarks/.venv-fastmcp, which
    scripts/setup-peers makes); under CI a missing one fails instead of skipping."""
    if not FASTMCP_PYTHON.exists():
        why = f"no fastmcp venv at {FASTMCP_PYTHON} (scripts/setup-peers or benchmarks/run.py --only fastmcp)"
        pytest.fail(why) if in_ci() else pytest.skip(why)
    script = tmp_path / "fastmcp_server.py"
    script.write_text(FASTMCP_SERVER)
    servers = {"fast": {"command": str(FASTMCP_PYTHON), "args": [str(script)]}, "kit": mcpkit_stdio("kit")}
    async with ClientGroup.from_config({"mcpServers": servers}, prefix=False) as group:
        assert group.status()["fast"]["state"] == "ready", group.status()["fast"]
        names = {t["name"] for t in group.tools()}
        assert {"shout", "fast.add", "kit.add", "whoami"} <= names  # only `add` collides
        assert (await text_of(await group.call_tool("shout", {"text": "hi"}))) == "HI"
        assert (await group.call_tool("fast.add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}


async def test_completion_is_routed_by_prompt_name_or_template() -> None:
    everything = StdioServer(sys.executable, (str(ROOT / "examples" / "everything.py"),), SRC)
    servers = {"demo": everything, "other": StdioServer(sys.executable, (GROUP_SERVER, "other"), SRC)}
    async with ClientGroup(servers) as group:
        styles = await group.complete({"type": "ref/prompt", "name": "demo.greet"}, "style", "f")
        assert styles["values"] == ["friendly", "formal"]
        notes = await group.complete({"type": "ref/resource", "uri": "demo://notes/{note_id}"}, "note_id", "")
        assert notes["values"]
        with pytest.raises(LocalError, match=r"no prompt 'other\.greet'"):
            await group.complete({"type": "ref/prompt", "name": "other.greet"}, "style", "f")
