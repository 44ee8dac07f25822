"""How many tasks a process moved into each status: the `mcp.server.tasks` counter (runtime.metrics)."""

from __future__ import annotations

from ...protocol.tasks import Status
from ...runtime.metrics import Metrics

__all__ = ["StatusCounts"]


class StatusCounts:
    """Tasks this process created (`working`) or moved into a status, by status. Each worker counts what
    it did, so the cluster's numbers are the sum across workers."""

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}

    def entered(self, status: Status) -> None:
        self.totals[status.value] = self.totals.get(status.value, 0) + 1

    def measure(self, metrics: Metrics) -> None:
        """Report the counts as the counter `mcp.server.tasks`, labelled `mcp.task.status` (`working`
        counts creations and resumptions after input)."""
        metrics.count("mcp.server.tasks", lambda: dict(self.totals), "mcp.task.status")
