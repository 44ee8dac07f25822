"""What a shared session has heard of the cluster's list_changed notifications, as the session scripts
take it (scripts.CREATE, scripts.CATCH_UP): the count of each method it has heard (`g:<method>`) and,
when the Server has a visibility hook, a digest of each list as its principal saw it when last told
(`w:<method>`). A count it has not heard is told only if the view the worker passes differs: the
worker compares its own registry, as it does for the subscriptions/listen streams it holds."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["Views", "heard_at_start", "not_heard"]

Views = Mapping[str, str]  # a digest of what a principal sees of each list, by list_changed method


def heard_at_start(counts: list[bytes], views: Views | None) -> list[bytes | str]:
    """CREATE's field, value pairs: a new session has heard every list_changed sent before it (the
    counts ADMIT returned, as method, count, ...), and its principal's views are those it began with."""
    pairs: list[bytes | str] = []
    for method, count in zip(counts[::2], counts[1::2], strict=True):
        pairs += [b"g:" + method, count]
    for announced, view in (views or {}).items():
        pairs += ["w:" + announced, view]
    return pairs


def not_heard(counts: Mapping[bytes | str, bytes | str], views: Views | None) -> list[bytes | str]:
    """CATCH_UP's method, count, view triples (the view '' without a hook: the count alone decides)."""
    triples: list[bytes | str] = []
    for method, count in counts.items():
        name = method.decode() if isinstance(method, bytes) else method
        triples += [method, count, (views or {}).get(name, "")]
    return triples
