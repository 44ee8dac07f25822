"""Hypothesis strategies that start from the spec's example messages and break them.

Seeds are every example the 2026-07-28 spec ships (requests, notifications, results, and the bare
types such as Tool or TextContent, which are not messages at all), the same requests with their
stateless `_meta` stripped (handshake-era requests), and a few handshake-only messages the
2026-07-28 examples cannot contain (initialize, ping, logging/setLevel, resources/subscribe).

A mutation drops or renames a key, puts another JSON type in a value's place, changes the id or the
method, wraps the message in a batch; a serialized message may then be truncated or get garbage bytes.
What the answers must look like is in fuzz_oracle.py.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from spec_schema import SPEC

# ../shared/spec beside the checkout, as every spec test finds it; MCPKIT_SPEC_DIR points elsewhere
# (a git worktree whose parent has no shared/).
EXAMPLES_DIR = Path(os.environ.get("MCPKIT_SPEC_DIR") or SPEC) / "2026-07-28" / "examples"
META = "io.modelcontextprotocol/"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
# Requests that stay open by design (a stream of notifications); answered only when they fail.
LONG_LIVED = frozenset({"subscriptions/listen"})
SENTINEL = "fuzz-sentinel-"

KNOWN_METHODS = (
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/message",
)


def _load_examples() -> list[Any]:
    if not EXAMPLES_DIR.is_dir():
        return []
    return [json.loads(p.read_bytes()) for p in sorted(EXAMPLES_DIR.glob("*/*.json"))]


def _strip_modern_meta(message: Any) -> Any:
    """The same request without the stateless-era `_meta` fields: a handshake-era request."""
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return message
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return message
    kept = {k: v for k, v in meta.items() if not k.startswith(META)}
    stripped = {**message, "params": {**params, "_meta": kept}}
    if not kept:
        del stripped["params"]["_meta"]
    return stripped


def modern_meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        META + "protocolVersion": MODERN,
        META + "clientInfo": {"name": "fuzz", "version": "1"},
        META + "clientCapabilities": capabilities or {},
    }


def request(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def stateless_request(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return request(rid, method, {**(params or {}), "_meta": modern_meta()})


def initialize(rid: Any = 0, version: str = HANDSHAKE) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
    return request(rid, "initialize", params)


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

EXAMPLES = _load_examples()
# Requests the examples lack whose parameters reach deeper code: a page cursor, a templated URI.
_REACHING: list[tuple[str, dict[str, Any]]] = [
    ("tools/list", {"cursor": "Mg"}),
    ("resources/list", {"cursor": "Mg"}),
    ("prompts/list", {"cursor": "Mg"}),
    ("resources/read", {"uri": "file:///project/notes/7"}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "code_review"},
            "argument": {"name": "language", "value": "py"},
            "context": {"arguments": {}},
        },
    ),
]
MODERN_SEEDS = [*EXAMPLES, *(stateless_request(f"r{i}", m, p) for i, (m, p) in enumerate(_REACHING))]
HANDSHAKE_SEEDS = [
    *(_strip_modern_meta(m) for m in EXAMPLES if isinstance(m, dict) and "method" in m),
    *(request(10 + i, m, p) for i, (m, p) in enumerate(_REACHING)),
    initialize(1),
    INITIALIZED,
    request(2, "ping"),
    request(3, "logging/setLevel", {"level": "debug"}),
    request(4, "resources/subscribe", {"uri": "file:///project/src/main.rs"}),
    request(5, "resources/templates/list"),
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
]


def without_long_lived(seeds: list[Any]) -> list[Any]:
    """Seeds minus the requests that stay open (a transport test would wait on them forever)."""
    return [m for m in seeds if not (isinstance(m, dict) and m.get("method") in LONG_LIVED)]


# ---- JSON values -------------------------------------------------------------------------------

_HUGE_INTS = st.sampled_from([2**31, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**30, 2**1000, -(10**400)])
_STRINGS = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.characters(max_codepoint=0x1F), max_size=20),  # control characters
    st.text(alphabet=st.characters(min_codepoint=0x80), max_size=20),  # unicode beyond ASCII
    st.sampled_from(["", "\u0000", "\ud800", "\U0001f600", "\u202e", "../../etc/passwd", "%00", "{x}"]),
    st.integers(1_000, 200_000).map(lambda n: "x" * n),  # long strings
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    _HUGE_INTS,
    st.floats(),  # nan and infinities serialize as NaN/Infinity, which is not JSON
    _STRINGS,
)


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@functools.cache
def json_values() -> st.SearchStrategy[Any]:
    """Any JSON type, including ones too big, too deep or not quite JSON."""
    nested = st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=8,
    )
    return st.one_of(nested, nested, nested, st.integers(100, 600).map(_deep))


@functools.cache
def ids() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(-(2**63), 2**63 - 1),
        st.text(max_size=20),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.builds(dict),  # built fresh each time: a later mutation changes it in place
        st.builds(list),
        st.builds(lambda: {"id": 1}),
        _HUGE_INTS,
    )


@functools.cache
def methods() -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(KNOWN_METHODS), _STRINGS, st.none(), st.integers(), st.builds(list))


# ---- mutations ---------------------------------------------------------------------------------


def _slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside `value` (the root is the empty path)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_slots(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_slots(item, (*path, index)))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return value


_KINDS = st.sampled_from(
    ["value", "value", "drop", "rename", "id", "method", "batch", "meta", "params", "field", "field"]
)
# Keys some method reads, so a wrong type reaches the code that reads it (not just the envelope).
_PARAM_KEYS = st.sampled_from(
    [
        "cursor",
        "name",
        "arguments",
        "uri",
        "ref",
        "argument",
        "context",
        "level",
        "requestId",
        "reason",
        "progressToken",
        "progress",
        "total",
        "protocolVersion",
        "capabilities",
        "clientInfo",
        "notifications",
        "inputResponses",
        "requestState",
        "task",
        META + "protocolVersion",
        META + "clientCapabilities",
        META + "clientInfo",
        META + "logLevel",
    ]
)


@st.composite
def _mutate_once(draw: st.DrawFn, value: Any) -> Any:
    kind = draw(_KINDS)
    if kind in ("id", "method", "params", "meta") and isinstance(value, dict):
        if kind == "id":
            value["id"] = draw(ids())
        elif kind == "method":
            value["method"] = draw(methods())
        elif kind == "params":
            value["params"] = draw(json_values())
        elif isinstance(value.get("params"), dict):
            value["params"]["_meta"] = draw(st.one_of(st.builds(modern_meta), json_values()))
        return value
    if kind == "field" and isinstance(value, dict) and isinstance(value.get("params"), dict):
        params = value["params"]
        key = draw(_PARAM_KEYS)
        if key.startswith(("progressToken", META)):
            params = params.setdefault("_meta", {})
            params = params if isinstance(params, dict) else {}
        params[key] = draw(json_values())
        return value
    if kind == "batch":
        return [copy.deepcopy(value) for _ in range(draw(st.integers(0, 3)))]
    path = draw(st.sampled_from(_slots(value)))
    if kind == "value" or not path:
        return _replace(value, path, draw(json_values()))
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    if isinstance(parent, dict):
        item = parent.pop(key)
        if kind == "rename":
            parent[draw(st.text(max_size=12))] = item
    elif kind == "drop":
        del parent[key]
    return value


def _seed(seeds: list[Any]) -> st.SearchStrategy[Any]:
    """Requests four times as often as notifications, and those as often as everything else."""
    requests = [m for m in seeds if isinstance(m, dict) and "method" in m and "id" in m]
    notes = [m for m in seeds if isinstance(m, dict) and "method" in m and "id" not in m]
    rest = [m for m in seeds if not (isinstance(m, dict) and "method" in m)]
    parts = [st.sampled_from(requests)] * 4 + [st.sampled_from(x) for x in (notes, rest) if x]
    return st.one_of(parts)


def mutated(seeds: list[Any]) -> st.SearchStrategy[Any]:
    """A seed message after zero to three mutations (zero keeps some valid traffic in the mix)."""
    seed = _seed(seeds)
    rounds = st.sampled_from([0, 1, 1, 1, 2, 3])

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        value = copy.deepcopy(draw(seed))
        for _ in range(draw(rounds)):
            value = draw(_mutate_once(value))
        return value

    return build()


def serialize(value: Any, ascii_only: bool = True) -> bytes:
    """JSON text for `value`, as a careless peer would write it: big ints, NaN and lone surrogates pass."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


_DAMAGE = st.integers(0, 15)
_PREFIXES = st.sampled_from([b"", b"\xff\xfe", b"\x00" * 8, b"{", b"[]", b"null", b"\xef\xbb\xbf"])


def wire_bytes(seeds: list[Any], newlines: bool = True) -> st.SearchStrategy[tuple[Any, bytes]]:
    """A mutated message and its bytes, which may then be truncated or have garbage put in."""
    messages = mutated(seeds)

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Any, bytes]:
        value = draw(messages)
        raw = serialize(value, draw(st.booleans()))
        damage = draw(_DAMAGE)  # most messages arrive whole
        if damage == 13 and raw:
            raw = raw[: draw(st.integers(0, len(raw) - 1))]
        elif damage == 14:
            at = draw(st.integers(0, len(raw)))
            raw = raw[:at] + draw(st.binary(min_size=1, max_size=16)) + raw[at:]
        elif damage == 15:
            raw = draw(_PREFIXES) + raw
        if not newlines:
            raw = raw.replace(b"\n", b" ").replace(b"\r", b" ")
        return value, raw

    return build()


def examples_available() -> bool:
    return bool(EXAMPLES)


def budget(examples: int) -> settings:
    """A fixed, reproducible budget for CI: `examples` inputs, the same ones every run.

    MCPKIT_FUZZ_SCALE multiplies the count for a longer hunt by hand (e.g. 20); CI leaves it unset.
    """
    scale = float(os.environ.get("MCPKIT_FUZZ_SCALE") or 1)
    return settings(
        max_examples=max(1, int(examples * scale)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
