"""The subscriptions/listen filter (2026-07-28 patterns "Subscriptions"), for both ends. No I/O.

Each boolean field opts in to one list_changed notification; `resourceSubscriptions` names the URIs
whose notifications/resources/updated the stream carries, `taskIds` (the tasks extension) the tasks whose
notifications/tasks it carries. The server MUST NOT send anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .jsonrpc import JSON

__all__ = ["FLAGS", "SubscriptionFilter"]

# filter field -> (the notification it opts in to, the server capability path that offers it)
FLAGS: Final = {
    "toolsListChanged": ("notifications/tools/list_changed", ("tools", "listChanged")),
    "promptsListChanged": ("notifications/prompts/list_changed", ("prompts", "listChanged")),
    "resourcesListChanged": ("notifications/resources/list_changed", ("resources", "listChanged")),
}
_UPDATED: Final = "notifications/resources/updated"
_TASK: Final = frozenset({"notifications/tasks", "notifications/tasks/status"})  # extension, 2025-11-25


@dataclass(frozen=True, slots=True)
class SubscriptionFilter:
    methods: frozenset[str]
    uris: frozenset[str]
    task_ids: frozenset[str] = frozenset()

    @classmethod
    def of(cls, notifications: JSON) -> SubscriptionFilter:
        """The filter a `notifications` object (a request's, or an acknowledgment's) describes."""
        methods = frozenset(FLAGS[f][0] for f, on in notifications.items() if f in FLAGS and on is True)
        return cls(
            methods,
            _strings(notifications.get("resourceSubscriptions")),
            _strings(notifications.get("taskIds")),
        )

    def wants(self, method: str, params: JSON | None) -> bool:
        if method == _UPDATED:
            return (params or {}).get("uri") in self.uris
        if method in _TASK:
            return (params or {}).get("taskId") in self.task_ids
        return method in self.methods


def _strings(items: object) -> frozenset[str]:
    return frozenset(i for i in items if isinstance(i, str)) if isinstance(items, list) else frozenset()
