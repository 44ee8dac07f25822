"""Tasks on the server: a call whose work outlives its request, kept in a TaskStore and run in legs.

`engine.py` (TaskEngine: creating, running, changing tasks), `store.py` (TaskRecord, TaskStore,
InMemoryTaskStore), `legs.py` (one run of a task's tool and its outcome), `changes.py` (every change
of a task), `notices.py` (telling who follows a task), `workers.py` (where legs run), the eras'
dialects (`dialect.py`, `extension.py` for 2026-07-28, `utility.py` for 2025-11-25), `handlers.py`
(the tasks/* methods), and `hosted_by_client.py` (the server asking the client to host a task).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

__all__ = ["InMemoryTaskStore", "OneProcess", "TaskCluster", "TaskEngine", "TaskRecord", "TaskStore"]

_EXPORTS = {
    "InMemoryTaskStore": "mcpkit.server.tasks.store",
    "OneProcess": "mcpkit.server.tasks.workers",
    "TaskCluster": "mcpkit.server.tasks.workers",
    "TaskEngine": "mcpkit.server.tasks.engine",
    "TaskRecord": "mcpkit.server.tasks.store",
    "TaskStore": "mcpkit.server.tasks.store",
}

if TYPE_CHECKING:
    from .engine import TaskEngine
    from .store import InMemoryTaskStore, TaskRecord, TaskStore
    from .workers import OneProcess, TaskCluster

__getattr__ = lazy_exports(__name__, _EXPORTS)
