"""The proxy between an mcpkit client and an mcpkit server, every pairing of eras: forwarding,
progress, list changes, server-initiated requests and cancellation both ways (in memory, real JSON)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpkit import Context, RemoteError, Server
from mcpkit.client.client import Client
from mcpkit.proxy import Proxy
from mcpkit.runtime.stream import memory_pair
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio
ERAS = ["handshake", "modern"]


class Remote:
    """The server behind the proxy, and what its tools saw."""

    def __init__(self, **options: Any) -> None:
        self.server = server = Server("remote", "7.0", instructions="ask me", **options)
        self.started, self.ended = anyio.Event(), anyio.Event()
        self.asks, self.ask_failed = 0, anyio.Event()

        @server.tool()
        def add(a: int, b: int) -> int:
            return a + b

        @server.tool()
        async def steps(ctx: Context) -> str:
            for i in (1, 2, 3):
                await ctx.report_progress(i, 3, f"step {i}")
            return "done"

        @server.tool()
        async def ask(ctx: Context) -> str:
            self.asks += 1
            try:
                reply = await ctx.sample("your name?", max_tokens=5)
            except BaseException:  # refused, or cancelled
                self.ask_failed.set()
                raise
            return f"sampled: {reply['content']['text']}"

        @server.tool()
        async def wait() -> str:
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.ended.set()
            return "never"

        server.add_resource("mem://a", content="alpha")


@asynccontextmanager
async def proxied(
    remote: Server, back: str, front: str, proxy: Proxy | None = None, **far_options: Any
) -> AsyncIterator[Client]:
    """`remote` behind a Proxy (its Client speaking the `back` era) and a far client (`front` era)."""
    proxy = proxy or Proxy()
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(remote.serve, server_end)
        try:
            async with (
                Client(client_end, era=back, **proxy.client_options()) as client,
                proxy.serving(client) as server,
                connect(server, era=front, **far_options) as far,
            ):
                yield far
        finally:
            await client_end.aclose()
            tg.cancel_scope.cancel()


def answer(text: str) -> Any:
    return lambda params: {"role": "assistant", "model": "far", "content": {"type": "text", "text": text}}


@pytest.mark.parametrize("back", ERAS)
@pytest.mark.parametrize("front", ERAS)
async def test_requests_progress_and_list_changes_cross_the_proxy_in_every_pairing(
    back: str, front: str
) -> None:
    remote = Remote()
    seen: list[tuple[float, float | None, str | None]] = []
    async with proxied(remote.server, back, front) as far:
        assert far.server_info["name"] == "remote" and far.instructions == "ask me"
        assert {t["name"] for t in await far.list_all_tools()} == {"add", "steps", "ask", "wait"}
        assert (await far.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        steps = await far.call_tool("steps", on_progress=lambda *a: seen.append(a))
        assert (await far.read_resource("mem://a"))["contents"][0]["text"] == "alpha"
        async with far.listen(tools=True) as changes:
            remote.server.add_tool(lambda: "new", name="late")
            with anyio.fail_after(5):
                method, _ = await changes.__anext__()
        assert method == "notifications/tools/list_changed"
        assert (await far.call_tool("late"))["content"][0]["text"] == "new"
    assert steps["content"][0]["text"] == "done"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("back", ERAS)
@pytest.mark.parametrize("front", ERAS)
async def test_the_remotes_sampling_request_is_answered_by_the_far_client(back: str, front: str) -> None:
    remote = Remote()
    async with proxied(remote.server, back, front, sampling=answer("Ada")) as far:
        assert (await far.call_tool("ask"))["content"][0]["text"] == "sampled: Ada"
        assert (await far.call_tool("ask"))["content"][0]["text"] == "sampled: Ada"
    # the far client's rounds never run the remote call again; a 2026-07-28 remote runs its own handler
    # once more per round, as its era does
    assert remote.asks == (2 if back == "handshake" else 4)


async def test_a_stateless_rounds_answer_must_come_with_the_request_it_answers() -> None:
    async with proxied(Remote().server, "handshake", "modern", sampling=answer("Ada")) as far:
        first = await far.session.request("tools/call", {"name": "ask", "arguments": {}})
        assert first["resultType"] == "input_required"
        [(key, asked)] = first["inputRequests"].items()
        assert asked["method"] == "sampling/createMessage"
        retry = {"requestState": first["requestState"], "inputResponses": {key: answer("x")({})}}
        with pytest.raises(RemoteError):  # other arguments than the first round's: refused
            await far.session.request("tools/call", {"name": "ask", "arguments": {"a": 1}, **retry})
        done = await far.session.request("tools/call", {"name": "ask", "arguments": {}, **retry})
    assert done["content"][0]["text"] == "sampled: x"


async def test_a_stateless_client_that_never_comes_back_abandons_the_remote_call() -> None:
    remote = Remote()
    async with proxied(
        remote.server, "handshake", "modern", Proxy(timeout=0.2), sampling=answer("Ada")
    ) as far:
        first = await far.session.request("tools/call", {"name": "ask", "arguments": {}})
        with anyio.fail_after(5):
            await remote.ask_failed.wait()  # the proxy's wait for the answer ran out: the call ended
        [key] = first["inputRequests"]
        retry = {"requestState": first["requestState"], "inputResponses": {key: answer("late")({})}}
        with pytest.raises(RemoteError, match="has ended"):
            await far.session.request("tools/call", {"name": "ask", "arguments": {}, **retry})


@pytest.mark.parametrize("back", ERAS)
async def test_cancelling_a_call_at_the_far_client_cancels_it_at_the_remote(back: str) -> None:
    remote = Remote()
    async with proxied(remote.server, back, "handshake") as far:
        async with anyio.create_task_group() as tg:
            tg.start_soon(far.call_tool, "wait")
            with anyio.fail_after(5):
                await remote.started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(5):
            await remote.ended.wait()
        assert (await far.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}


async def test_the_remote_giving_up_on_its_request_cancels_it_at_the_far_client() -> None:
    remote = Remote(client_request_timeout=0.2)  # the remote cancels its sampling request
    asked, cancelled = anyio.Event(), anyio.Event()

    async def never_answers(params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async with proxied(remote.server, "handshake", "handshake", sampling=never_answers) as far:
        with pytest.raises(RemoteError, match="timed out"):  # the remote's error, passed on as it is
            await far.call_tool("ask")
        with anyio.fail_after(5):
            await cancelled.wait()
    assert asked.is_set()


@pytest.mark.parametrize("front", ERAS)
async def test_a_resource_subscription_goes_to_the_remote_and_its_updates_come_back(front: str) -> None:
    remote = Remote()
    async with (
        proxied(remote.server, "handshake", front) as far,
        far.listen(uris=["mem://a"]) as updates,
    ):
        await remote.server.notify_resource_updated("mem://a")
        with anyio.fail_after(5):
            method, params = await updates.__anext__()
    assert (method, params["uri"]) == ("notifications/resources/updated", "mem://a")


async def test_the_far_clients_roots_change_reaches_the_remote() -> None:
    remote = Remote()
    heard = anyio.Event()
    remote.server.on_roots_changed(lambda session: heard.set())
    async with proxied(remote.server, "handshake", "handshake", roots=[{"uri": "file:///r"}]) as far:
        await far.roots_changed()
        with anyio.fail_after(5):
            await heard.wait()


@pytest.mark.parametrize("front", ERAS)
async def test_a_modern_remotes_question_goes_to_the_client_whose_call_asked(front: str) -> None:
    """Issue 31 item 23: A's call asks once B's call is in flight; only A is asked, and with A's answer."""
    remote, go = Server("remote", "7.0"), anyio.Event()

    @remote.tool()
    async def ask_later(ctx: Context) -> str:
        await go.wait()
        reply = await ctx.sample("your name?", max_tokens=5)
        return f"sampled: {reply['content']['text']}"

    @remote.tool()
    async def hold() -> str:
        go.set()
        await anyio.sleep(0.5)
        return "held"

    proxy, (client_end, server_end) = Proxy(), memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(remote.serve, server_end)
        async with (
            Client(client_end, era="modern", **proxy.client_options()) as client,
            proxy.serving(client) as server,
            connect(server, era=front, sampling=answer("A")) as a,
            connect(server, era=front, sampling=answer("B")) as b,
        ):
            results: dict[str, Any] = {}

            async def call_a() -> None:
                results["a"] = await a.call_tool("ask_later")

            tg.start_soon(call_a)
            await anyio.sleep(0.1)
            results["b"] = await b.call_tool("hold")
            with anyio.fail_after(5):
                while "a" not in results:
                    await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    assert results["a"]["content"][0]["text"] == "sampled: A"
