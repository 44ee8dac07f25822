"""What the Server's handlers work with, built once by the Server: what is offered (the Registry), who
is connected (Peers), the tasks (a TaskEngine), and the key sealing requestState (StateSealer)."""

from __future__ import annotations

from dataclasses import dataclass

from .peers import Peers
from .registry import Registry
from .request_state import StateSealer
from .tasks.engine import TaskEngine

__all__ = ["Services"]


@dataclass(frozen=True, slots=True)
class Services:
    """The Server's parts a handler may use; a handler gets them with the request's Context and params,
    and nothing else, so a handler can be tested with a Registry and a fake session."""

    registry: Registry
    peers: Peers
    tasks: TaskEngine
    sealer: StateSealer
