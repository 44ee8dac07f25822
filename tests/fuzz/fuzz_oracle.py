"""What every fuzz test checks of the answers, whatever was sent: the oracle the fuzz tests share.

A request (an object with a non-null "method" and a string or integer "id") is answered at least
once per time it was sent, no id is answered more often than it was sent, and every reply is a
well-formed JSON-RPC response whose error code is one the spec allows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, TypeGuard

import orjson
from fuzz_messages import LONG_LIVED

# JSON-RPC 2.0's own codes and the -32000..-32099 server-error range, where MCP puts its codes.
STANDARD_CODES = frozenset({-32700, -32600, -32601, -32602, -32603})


def is_spec_code(code: Any) -> bool:
    """A JSON-RPC error code the spec allows on the wire."""
    return isinstance(code, int) and (code in STANDARD_CODES or -32099 <= code <= -32000)


def parsed(raw: bytes, max_depth: int = 128) -> Any:
    """What the bytes decode to, or None when they are not one JSON text (a parse error is expected).

    orjson is the decoder mcpkit chose, so its reading is the one the oracle takes: an integer past
    64 bits decodes to a float (no valid id), lone surrogates and raw control characters are refused.
    Nesting deeper than mcpkit's default limit is refused too (the limit is documented, -32700).
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return None if _depth(value) > max_depth else value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _valid_id(value: object) -> TypeGuard[str | int]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def expected_ids(messages: list[Any]) -> tuple[Counter[Any], set[Any]]:
    """The ids that must be answered exactly once each, and the ids that may go unanswered.

    A request is an object with a non-null "method" and a string or integer "id": whatever else is
    wrong with it, the reply carries its id. Exceptions: a long-lived request, and one a
    notifications/cancelled in the same batch names (utilities "Cancellation": no response follows).
    """
    must: Counter[Any] = Counter()
    may: set[Any] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        rid = message.get("id")
        method = message.get("method")
        if method is not None and _valid_id(rid):
            if isinstance(method, str) and method in LONG_LIVED:
                may.add(_key(rid))
            else:
                must[_key(rid)] += 1
        params = message.get("params")
        if method == "notifications/cancelled" and isinstance(params, dict):
            named = params.get("requestId")
            if _valid_id(named):
                may.add(_key(named))
    for rid in may:
        must.pop(rid, None)
    return must, may


def _key(rid: str | int) -> tuple[str, str | int]:
    """Ids 1 and "1" are different ids; a float that decoded from a huge integer is no id at all."""
    return (type(rid).__name__, rid)


def answered(replies: list[Any]) -> Counter[Any]:
    """How many replies each id got."""
    return Counter(_key(r["id"]) for r in replies if isinstance(r, dict) and _valid_id(r.get("id")))


def check_replies(messages: list[Any], replies: list[Any]) -> None:
    """Every request answered exactly once; every reply a well-formed response with a spec code.

    An invalid message that is not a request may still be answered with an error echoing its id
    (JSON-RPC 2.0 section 5), so an id is answered at least as often as requests carried it, and
    never more often than messages did.
    """
    must, _ = expected_ids(messages)
    sent = Counter(_key(m["id"]) for m in messages if isinstance(m, dict) and _valid_id(m.get("id")))
    got = answered(replies)
    for rid, count in must.items():
        assert got[rid] >= count, f"request id {rid[1]!r} answered {got[rid]} times, expected {count}"
    for rid, count in got.items():
        assert count <= sent[rid], f"id {rid[1]!r} answered {count} times, sent {sent[rid]} times"
    for reply in replies:
        check_reply_shape(reply)


def check_reply_shape(reply: Any) -> None:
    assert isinstance(reply, dict) and reply.get("jsonrpc") == "2.0", reply
    assert "method" not in reply or "id" not in reply, f"the server sent a request: {reply}"
    if "method" in reply:
        return  # a notification (progress, log) the server may send
    assert ("result" in reply) != ("error" in reply), reply
    if "error" in reply:
        error = reply["error"]
        assert is_spec_code(error.get("code")), error
        assert isinstance(error.get("message"), str), error
    else:
        assert isinstance(reply["result"], dict), reply


def internal_errors(messages: list[Any], replies: list[Any]) -> list[Any]:
    """The -32603 replies (the fuzz server's handlers never fail, so each one is a defect)."""
    return [
        r
        for r in replies
        if isinstance(r, dict) and isinstance(r.get("error"), dict) and r["error"].get("code") == -32603
    ]
