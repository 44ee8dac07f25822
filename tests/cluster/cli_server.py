"""The server `mcpkit serve --workers N --redis URL` runs in tests/cluster/test_cluster_cli.py."""

from __future__ import annotations

import os

from mcpkit import Server

server = Server("cli-cluster")


@server.tool()
def pid() -> int:
    """The id of the worker process that ran this call."""
    return os.getpid()
