"""Task counts by status for metrics (issue 30): the statuses tasks entered in this process, reported as a
Prometheus counter and through the OpenTelemetry metrics API."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Context, Server
from mcpkit.client.tasks import TaskFailed
from mcpkit.protocol.errors import INTERNAL_ERROR, MCPError
from mcpkit.runtime.metrics import OpenTelemetryMetrics, PrometheusMetrics
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def build() -> Server:
    server = Server("counted")

    @server.tool(task=True)
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("sure?", CONFIRM)
        return f"ok={(answer.content or {}).get('ok')}"

    @server.tool(task=True)
    def broken() -> str:
        raise MCPError(INTERNAL_ERROR, "protocol trouble")  # a task failed (a tool error completes it)

    @server.tool(task=True)
    async def forever() -> str:
        await anyio.sleep_forever()
        return "never"

    return server


async def yes(_params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


async def run_tasks(server: Server) -> None:
    """One task completed after asking for input, one failed, one cancelled."""
    async with connect(server, era="modern", elicitation=yes) as client:
        assert (await (await client.call_tool_as_task("confirm")).result())["content"][0]["text"] == "ok=True"
        with pytest.raises(TaskFailed):
            await (await client.call_tool_as_task("broken")).result()
        endless = await client.call_tool_as_task("forever")
        await endless.cancel()


async def test_task_counts_by_status_are_a_prometheus_counter() -> None:
    server, metrics = build(), PrometheusMetrics()
    server.tasks.counts.measure(metrics)
    await run_tasks(server)
    exposition = metrics.exposition()
    assert exposition is not None
    series = exposition[0].decode().splitlines()
    # working: three created, and one resumed once its input came
    for status, total in [("working", 4), ("input_required", 1), ("completed", 1), ("failed", 1)]:
        assert f'mcp_server_tasks_total{{mcp_task_status="{status}"}} {total}.0' in series
    assert 'mcp_server_tasks_total{mcp_task_status="cancelled"} 1.0' in series


async def test_task_counts_reach_the_opentelemetry_metrics_api_as_a_counter() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader, Sum

    reader = InMemoryMetricReader()
    server = build()
    server.tasks.counts.measure(OpenTelemetryMetrics(MeterProvider(metric_readers=[reader])))
    await run_tasks(server)
    data = reader.get_metrics_data()
    assert data is not None
    (counted,) = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    assert counted.name == "mcp.server.tasks" and isinstance(counted.data, Sum) and counted.data.is_monotonic
    points = {
        dict(p.attributes or {})["mcp.task.status"]: getattr(p, "value", None)
        for p in counted.data.data_points
    }
    assert points == {"working": 4, "input_required": 1, "completed": 1, "failed": 1, "cancelled": 1}
