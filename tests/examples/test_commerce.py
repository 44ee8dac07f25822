"""The commerce example: a shop server on SQLite, driven in memory and over real stdio."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit import RemoteError
from mcpkit.client import connect_stdio
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
SERVER_PY = REPO / "examples" / "commerce" / "server.py"

_spec = importlib.util.spec_from_file_location("commerce_server", SERVER_PY)
assert _spec is not None and _spec.loader is not None
commerce = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(commerce)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "shop.db"


@pytest.fixture
def server(db_path: Path) -> Any:
    return commerce.build_server(db_path)


def rows(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


async def test_check_inventory_reports_total_and_per_warehouse_quantities(server: Any) -> None:
    async with connect(server) as client:
        tools = {t["name"]: t for t in await client.list_all_tools()}
        assert tools["check_inventory"]["outputSchema"]["properties"]["total"]["type"] == "integer"
        assert tools["check_inventory"]["annotations"]["readOnlyHint"] is True
        result = await client.call_tool("check_inventory", {"sku": "COF-ETH-250"})
        assert not result.get("isError")
        assert result["structuredContent"] == {
            "sku": "COF-ETH-250",
            "name": "Ethiopia Yirgacheffe 250g",
            "total": 77,
            "warehouses": {"EDI": 12, "LON": 40, "MAN": 25},
        }
        assert json.loads(result["content"][0]["text"])["total"] == 77
        one = await client.call_tool("check_inventory", {"sku": "COF-ETH-250", "warehouse": "MAN"})
        assert one["structuredContent"]["warehouses"] == {"MAN": 25}
        assert one["structuredContent"]["total"] == 25


async def test_check_inventory_of_an_unknown_sku_is_a_tool_error(server: Any) -> None:
    async with connect(server) as client:
        result = await client.call_tool("check_inventory", {"sku": "NOPE-1"})
        assert result["isError"] is True
        assert "Unknown SKU 'NOPE-1'" in result["content"][0]["text"]


async def test_twenty_concurrent_stock_increments_all_land(server: Any, db_path: Path) -> None:
    async with connect(server) as client:
        before = (await client.call_tool("check_inventory", {"sku": "TEA-ASS-200"}))["structuredContent"]
        results: list[dict[str, Any]] = []

        async def bump() -> None:
            args = {"sku": "TEA-ASS-200", "warehouse": "LON", "delta": 1}
            results.append(await client.call_tool("update_stock", args))

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(bump)
        assert [r.get("isError") for r in results] == [None] * 20
        after = (await client.call_tool("check_inventory", {"sku": "TEA-ASS-200"}))["structuredContent"]
        assert after["total"] == before["total"] + 20
        assert after["warehouses"]["LON"] == before["warehouses"]["LON"] + 20
        assert sorted(r["structuredContent"]["quantity"] for r in results) == list(range(31, 51))
    assert rows(db_path, "SELECT quantity FROM stock WHERE sku='TEA-ASS-200' AND warehouse='LON'") == [(50,)]


async def test_update_stock_refuses_to_make_stock_negative(server: Any, db_path: Path) -> None:
    async with connect(server) as client:
        result = await client.call_tool(
            "update_stock", {"sku": "BRW-GRN-HND", "warehouse": "EDI", "delta": -2}
        )
        assert result["isError"] is True
        assert "negative" in result["content"][0]["text"]
    assert rows(db_path, "SELECT quantity FROM stock WHERE sku='BRW-GRN-HND' AND warehouse='EDI'") == [(1,)]


ERAS = pytest.mark.parametrize("era", ["handshake", "modern"])


@ERAS
async def test_stock_falling_below_threshold_sends_a_warning_log(server: Any, era: str) -> None:
    logs: list[dict[str, Any]] = []
    async with connect(server, on_log=logs.append, era=era) as client:
        await client.set_logging_level("debug")  # a session's level, or each stateless request's _meta
        quiet = await client.call_tool(
            "update_stock", {"sku": "COF-COL-250", "warehouse": "LON", "delta": -5}
        )
        assert quiet["structuredContent"]["low_stock"] is False
        assert logs == []
        result = await client.call_tool(
            "update_stock", {"sku": "COF-ESP-1K", "warehouse": "MAN", "delta": -4}
        )
        assert result["structuredContent"]["quantity"] == 4
        assert result["structuredContent"]["low_stock"] is True
    assert len(logs) == 1
    assert logs[0]["level"] == "warning"
    assert logs[0]["data"]["sku"] == "COF-ESP-1K"
    assert logs[0]["data"]["quantity"] == 4
    assert logs[0]["data"]["threshold"] == 5


@ERAS
async def test_subscribers_to_a_product_hear_when_its_stock_changes(server: Any, era: str) -> None:
    uri = "commerce://products/ACC-MUG-350"
    async with connect(server, era=era) as client, client.listen(uris=[uri]) as subscription:
        await client.call_tool("update_stock", {"sku": "ACC-MUG-350", "warehouse": "EDI", "delta": 3})
        with anyio.fail_after(5):
            method, params = await subscription.__anext__()
        product = json.loads((await client.read_resource(uri))["contents"][0]["text"])
    assert method == "notifications/resources/updated" and params["uri"] == uri
    assert product["stock"]["EDI"] == 18


@ERAS
async def test_resources_read_as_json_and_unknown_ones_are_not_found(server: Any, era: str) -> None:
    async with connect(server, era=era) as client:
        listed = {r["uri"]: r for r in await client.list_all_resources()}
        cat = listed["commerce://catalog/categories"]
        assert cat["mimeType"] == "application/json"
        assert cat["annotations"]["audience"] == ["user", "assistant"]
        assert cat["annotations"]["priority"] == 0.8
        assert cat["annotations"]["lastModified"].endswith("Z")
        templates = {t["uriTemplate"] for t in await client.list_all_resource_templates()}
        assert templates == {"commerce://products/{sku}", "commerce://orders/{order_id}/items"}

        read = (await client.read_resource("commerce://catalog/categories"))["contents"][0]
        assert read["mimeType"] == "application/json"
        categories = {c["name"]: c["products"] for c in json.loads(read["text"])}
        assert categories == {"accessories": 3, "brewing": 3, "coffee": 3, "tea": 3}

        product = json.loads(
            (await client.read_resource("commerce://products/BRW-V60-02"))["contents"][0]["text"]
        )
        assert product["price"] == 26.0
        assert product["category"] == "brewing"
        assert product["total_stock"] == 24

        order = json.loads(
            (await client.read_resource("commerce://orders/ORD-1003/items"))["contents"][0]["text"]
        )
        assert order["customer"] == "Grace Hopper"
        assert [i["sku"] for i in order["items"]] == ["ACC-MUG-350", "TEA-CHA-100", "TEA-SEN-100"]
        assert order["total"] == 59.5

        for uri in ("commerce://products/NOPE-1", "commerce://orders/ORD-9999/items"):
            with pytest.raises(RemoteError) as caught:
                await client.read_resource(uri)
            assert caught.value.code == (-32002 if era == "handshake" else -32602)  # 2026-07-28 changed it


async def test_recommendation_prompt_lists_products_within_budget_and_completes_category(server: Any) -> None:
    async with connect(server) as client:
        prompt = await client.get_prompt("product_recommendation", {"category": "brewing", "budget": "50"})
        body = prompt["messages"][0]["content"]["text"]
        assert "BRW-V60-02" in body and "BRW-KTL-GOO" in body
        assert "BRW-GRN-HND" not in body  # 89.00 is over budget
        ref = {"type": "ref/prompt", "name": "product_recommendation"}
        assert (await client.complete(ref, "category", ""))["values"] == [
            "accessories",
            "brewing",
            "coffee",
            "tea",
        ]
        assert (await client.complete(ref, "category", "c"))["values"] == ["coffee"]


async def test_an_accepted_and_confirmed_return_writes_one_row(server: Any, db_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"reason": "damaged", "confirm": True}}

    async with connect(server, elicitation=elicitation) as client:
        result = await client.call_tool("process_return", {"order_id": "ORD-1001", "sku": "COF-ETH-250"})
    assert not result.get("isError")
    assert "recorded" in result["content"][0]["text"]
    assert "damaged" in asked[0]["requestedSchema"]["properties"]["reason"]["enum"]
    assert rows(db_path, "SELECT order_id, sku, reason FROM returns") == [
        ("ORD-1001", "COF-ETH-250", "damaged")
    ]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"action": "decline"}, "decline"),
        ({"action": "cancel"}, "cancel"),
        ({"action": "accept", "content": {"reason": "other", "confirm": False}}, "did not confirm"),
    ],
)
async def test_a_declined_cancelled_or_unconfirmed_return_records_nothing(
    server: Any, db_path: Path, answer: dict[str, Any], said: str
) -> None:
    async with connect(server, elicitation=lambda params: answer) as client:
        result = await client.call_tool("process_return", {"order_id": "ORD-1002", "sku": "BRW-GRN-HND"})
    text = result["content"][0]["text"]
    assert "No return recorded" in text and said in text
    assert rows(db_path, "SELECT COUNT(*) FROM returns") == [(0,)]


async def test_translate_description_returns_the_text_the_client_llm_sampled(server: Any) -> None:
    prompts: list[str] = []

    def sampling(params: dict[str, Any]) -> dict[str, Any]:
        prompts.append(params["messages"][0]["content"]["text"])
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Té verde japonés al vapor."},
            "model": "test-model",
        }

    async with connect(server, sampling=sampling) as client:
        result = await client.call_tool(
            "translate_description", {"sku": "TEA-SEN-100", "language": "Spanish"}
        )
    assert result["content"][0]["text"] == "Té verde japonés al vapor."
    assert "Spanish" in prompts[0] and "Steamed green tea" in prompts[0]


async def test_translate_description_without_client_sampling_is_an_error_naming_sampling(server: Any) -> None:
    async with connect(server) as client:
        result = await client.call_tool("translate_description", {"sku": "TEA-SEN-100", "language": "French"})
    assert result["isError"] is True
    assert "sampling" in result["content"][0]["text"]


async def test_the_server_runs_over_real_stdio_on_its_own_database(tmp_path: Path) -> None:
    db_file = tmp_path / "stdio.db"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, str(SERVER_PY), "--db", str(db_file)]
    with anyio.fail_after(20):
        async with connect_stdio(command, env=env) as client:
            assert client.server_info["name"] == "mcpkit-commerce"
            update = await client.call_tool(
                "update_stock", {"sku": "ACC-FLT-100", "warehouse": "MAN", "delta": -30}
            )
            assert update["structuredContent"]["quantity"] == 50
            result = await client.call_tool("check_inventory", {"sku": "ACC-FLT-100"})
            assert result["structuredContent"]["total"] == 210
    assert rows(db_file, "SELECT MAX(version) FROM schema_version") == [(3,)]


async def test_the_server_runs_over_streamable_http_and_says_how_to_connect(tmp_path: Path) -> None:
    import socket
    import subprocess

    from mcpkit.client import connect_http

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [
        sys.executable,
        str(SERVER_PY),
        "--db",
        str(tmp_path / "http.db"),
        "--http",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        banner = [process.stderr.readline() for _ in range(3)]
        assert f"mcpkit call http://127.0.0.1:{port}/mcp check_inventory sku=" in "".join(banner)
        with anyio.fail_after(20):
            while True:
                try:
                    async with connect_http(f"http://127.0.0.1:{port}/mcp", timeout=5) as client:
                        result = await client.call_tool("check_inventory", {"sku": "ACC-FLT-100"})
                        break
                except Exception:
                    await anyio.sleep(0.2)
        assert result["structuredContent"]["total"] == 240
    finally:
        process.terminate()
        process.wait(10)
