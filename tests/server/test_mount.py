"""Server.mount: a child server's primitives offered by its parent under a prefix, in both eras."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Context, RemoteError, Server
from mcpkit.server.mount import prefixed_uri
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio
ERAS = ["handshake", "modern"]


def billing() -> Server:
    child = Server("billing")

    @child.tool()
    def refund(order: str, ctx: Context) -> str:
        return f"refunded {order} for request {ctx.request_id is not None}"

    @child.prompt()
    def apology(customer: str) -> str:
        return f"Sorry, {customer}."

    child.add_resource("mem://policy", content="30 days", mime_type="text/plain")

    @child.resource("invoices://{number}")
    def invoice(number: int) -> str:
        return f"invoice {number}"

    @child.completion(prompt="apology", argument="customer")
    def customers(value: str, _context: dict[str, str]) -> list[str]:
        return [c for c in ("ada", "alan", "grace") if c.startswith(value)]

    return child


def shop() -> tuple[Server, Server]:
    parent, child = Server("shop"), billing()
    parent.add_tool(lambda: "open", name="status")
    parent.mount(child, "billing")
    return parent, child


@pytest.mark.parametrize("era", ERAS)
async def test_a_mounted_servers_primitives_are_served_under_its_prefix(era: str) -> None:
    parent, _child = shop()
    async with connect(parent, era=era) as client:
        assert {t["name"] for t in await client.list_all_tools()} == {"status", "billing_refund"}
        called = await client.call_tool("billing_refund", {"order": "A1"})
        assert called["content"][0]["text"] == "refunded A1 for request True"
        assert [p["name"] for p in await client.list_all_prompts()] == ["billing_apology"]
        prompt = await client.get_prompt("billing_apology", {"customer": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Sorry, Ada."
        assert [r["uri"] for r in await client.list_all_resources()] == ["mem://billing/policy"]
        templates = await client.list_all_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["invoices://billing/{number}"]
        policy = await client.read_resource("mem://billing/policy")
        assert policy["contents"] == [
            {"uri": "mem://billing/policy", "mimeType": "text/plain", "text": "30 days"}
        ]
        invoice = await client.read_resource("invoices://billing/7")
        assert invoice["contents"][0] == {
            "uri": "invoices://billing/7",
            "mimeType": "text/plain",
            "text": "invoice 7",
        }
        completed = await client.complete({"type": "ref/prompt", "name": "billing_apology"}, "customer", "a")
        assert completed["values"] == ["ada", "alan"]
        with pytest.raises(RemoteError):  # the child's own names are not the parent's
            await client.call_tool("refund", {"order": "A1"})
        with pytest.raises(RemoteError):
            await client.read_resource("mem://policy")


@pytest.mark.parametrize("era", ERAS)
async def test_the_childs_changes_reach_the_parents_clients(era: str) -> None:
    parent, child = shop()
    async with connect(parent, era=era) as client, client.listen(tools=True) as subscription:
        child.add_tool(lambda: "late", name="chargeback")
        with anyio.fail_after(5):
            method, _ = await subscription.__anext__()
        assert method == "notifications/tools/list_changed"
        names = {t["name"] for t in await client.list_all_tools()}
        assert names == {"status", "billing_refund", "billing_chargeback"}
        assert (await client.call_tool("billing_chargeback"))["content"][0]["text"] == "late"
        child.remove_tool("refund")
        with anyio.fail_after(5):
            method, _ = await subscription.__anext__()
        assert method == "notifications/tools/list_changed"
        assert {t["name"] for t in await client.list_all_tools()} == {"status", "billing_chargeback"}


@pytest.mark.parametrize("era", ERAS)
async def test_a_childs_resource_update_is_announced_under_the_prefixed_uri(era: str) -> None:
    parent, child = shop()
    async with (
        connect(parent, era=era) as client,
        client.listen(uris=["mem://billing/policy"]) as subscription,
    ):
        await child.notify_resource_updated("mem://policy")
        with anyio.fail_after(5):
            method, params = await subscription.__anext__()
    assert method == "notifications/resources/updated"
    assert params["uri"] == "mem://billing/policy"


async def test_the_childs_log_messages_reach_the_parents_clients() -> None:
    parent, child = shop()
    logs: list[Any] = []
    async with connect(parent, era="handshake", on_log=logs.append) as client:
        await client.set_logging_level("info")
        await child.log("info", "from billing")
        with anyio.fail_after(5):
            while not logs:
                await client.ping()
    assert logs[0]["data"] == "from billing"


async def test_mounts_nest_and_a_parents_own_item_is_never_taken_away() -> None:
    parent, child = shop()
    grandchild = Server("tax")
    grandchild.add_tool(lambda: "vat", name="rate")
    child.mount(grandchild, "tax")
    parent.add_tool(lambda: "mine", name="billing_mine")
    child.add_tool(lambda: "theirs", name="mine")  # a name the parent serves: not offered
    parent.add_tool(lambda: "mine again", name="billing_mine")
    child.remove_tool("mine")  # the mount takes away only what it put there
    async with connect(parent, era="modern") as client:
        names = {t["name"] for t in await client.list_all_tools()}
        assert names == {"status", "billing_refund", "billing_tax_rate", "billing_mine"}
        assert (await client.call_tool("billing_tax_rate"))["content"][0]["text"] == "vat"
        assert (await client.call_tool("billing_mine"))["content"][0]["text"] == "mine again"


def test_mounting_refuses_names_the_parent_already_serves_and_names_them() -> None:
    """Issue 31 item 25: a collision would silently replace the parent's item and drop its scopes."""
    parent = Server("shop")
    parent.add_tool(lambda: "mine", name="billing_refund", scopes=["admin"])
    with pytest.raises(ValueError, match="tools 'billing_refund'"):
        parent.mount(billing(), "billing")
    assert parent.registry.tools["billing_refund"].scopes == frozenset({"admin"})
    assert set(parent.registry.prompts) == set() and set(parent.registry.resources) == set()

    twice, _child = shop()
    with pytest.raises(ValueError) as caught:
        twice.mount(billing(), "billing")
    for named in ("tools 'billing_refund'", "prompts 'billing_apology'", "'mem://billing/policy'"):
        assert named in str(caught.value)

    left, right = Server("a"), Server("a_b")
    left.add_tool(lambda: "left", name="b_c")
    right.add_tool(lambda: "right", name="c")
    both = Server("both")
    both.mount(left, "a")
    with pytest.raises(ValueError, match="'a_b_c'"):
        both.mount(right, "a_b")
    assert (both.registry.tools["a_b_c"].name, len(both.registry.tools)) == ("a_b_c", 1)


def test_the_uri_rule_puts_the_prefix_after_the_scheme() -> None:
    assert prefixed_uri("notes://{id}", "a") == "notes://a/{id}"
    assert prefixed_uri("file:///etc/x", "a") == "file://a//etc/x"
    assert prefixed_uri("urn:isbn:1", "a") == "urn:a/isbn:1"
    with pytest.raises(ValueError, match="scheme"):
        prefixed_uri("{+path}", "a")


def test_a_prefix_must_be_made_of_tool_name_characters() -> None:
    for bad in ("", "a b", "a/b", "x" * 65):
        with pytest.raises(ValueError):
            Server("p").mount(Server("c"), bad)
    with pytest.raises(ValueError):
        server = Server("p")
        server.mount(server, "self")
