"""The processes a TaskEngine runs legs in: this one alone (`OneProcess`), or the workers of a cluster
sharing one TaskStore (mcpkit.cluster's `ClusterTasks`), chosen where the server is assembled."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ...runtime.session import Session

__all__ = ["OneProcess", "TaskCluster"]


class TaskCluster(Protocol):
    """The workers sharing a TaskStore, as the engine needs them."""

    @property
    def worker(self) -> str | None:
        """This process's name among them (a task's `runner`); None when it is the only one."""
        ...

    async def alive(self, worker: str) -> bool: ...

    async def cancel_elsewhere(self, task_id: str) -> None:
        """Have whichever worker runs the task's leg cancel it."""
        ...

    def outliving(self, session: Session) -> AbstractAsyncContextManager[Session]:
        """A session to the same client as `session` (a request's) that lasts until the block ends."""
        ...


class OneProcess:
    """Every leg runs here, and a session outlives its requests."""

    @property
    def worker(self) -> str | None:
        return None

    async def alive(self, worker: str) -> bool:
        return True

    async def cancel_elsewhere(self, task_id: str) -> None:
        """Never asked: a leg without a runner is this process's."""

    @asynccontextmanager
    async def outliving(self, session: Session) -> AsyncIterator[Session]:
        yield session
