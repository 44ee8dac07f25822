"""What the Server's handlers work with, built once by the Server: what is offered (the Registry), who
is connected (Peers), the tasks (a TaskEngine), the key sealing requestState (StateSealer), and which
items each caller sees (Visibility)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..runtime.origin import Origin
from .peers import Peers
from .registry import Registry, Shows
from .request_state import StateSealer
from .tasks.engine import TaskEngine

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken
    from .visibility import Visibility

__all__ = ["Services"]


@dataclass(frozen=True, slots=True)
class Services:
    """The Server's parts a handler may use; a handler gets them with the request's Context and params,
    and nothing else, so a handler can be tested with a Registry and a fake session."""

    registry: Registry
    peers: Peers
    tasks: TaskEngine
    sealer: StateSealer
    visibility: Visibility | None = None  # which items each caller sees (None: all of them)

    def viewing(self, member: object, origin: Origin | None) -> Shows | None:
        """What the caller of a message from `origin` sees (None: everything, no visibility hook);
        `member`, the session it came on, speaks for that caller from now on."""
        return self.visibility.viewing(member, origin) if self.visibility is not None else None

    def shows_to(self, auth: AccessToken | None) -> Shows | None:
        """What the caller holding `auth` sees (None: everything, no visibility hook)."""
        return self.visibility.shows(auth) if self.visibility is not None else None

    def unknown_caller(self) -> Shows | None:
        """What a caller not known yet sees: nothing with a visibility hook, else everything (None)."""
        return _nothing if self.visibility is not None else None


def _nothing(_kind: str, _item: object) -> bool:
    return False
