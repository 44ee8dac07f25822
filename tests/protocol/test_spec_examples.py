"""Every example message the 2026-07-28 spec ships goes through mcpkit's wire layer and back unchanged.

mcpkit's wire values are plain JSON objects inside typed envelopes (Request, Notification, Response,
ErrorResponse); the examples are decoded, classified into those envelopes, rebuilt by the same
builders mcpkit sends with, and compared. Request `_meta` is read by the stateless-era reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit.protocol import jsonrpc as rpc
from mcpkit.protocol.stateless import is_stateless_request, read_request_meta, result_type
from mcpkit.protocol.versions import SUPPORTED_VERSIONS
from spec_schema import SPEC, available, definitions, problems

EXAMPLES = SPEC / "2026-07-28" / "examples"
FILES = sorted(EXAMPLES.glob("*/*.json")) if EXAMPLES.is_dir() else []

pytestmark = pytest.mark.skipif(
    not available("2026-07-28"), reason="needs ../shared/spec beside the checkout"
)


def rebuild(message: rpc.Request | rpc.Notification | rpc.Response | rpc.ErrorResponse) -> dict[str, Any]:
    if isinstance(message, rpc.Request):
        return rpc.request_message(message.id, message.method, message.params)
    if isinstance(message, rpc.Notification):
        return rpc.notification_message(message.method, message.params)
    if isinstance(message, rpc.Response):
        return rpc.result_message(message.id, message.result)
    return rpc.error_message(message.id, message.error)


def test_there_are_examples_to_check() -> None:
    assert len(FILES) > 50


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_example_is_valid_and_survives_mcpkits_wire_layer(path: Path) -> None:
    raw = path.read_bytes()
    value = rpc.decode(raw, rpc.DEFAULT_MAX_DEPTH)
    kind = path.parent.name
    if kind in definitions("2026-07-28"):
        assert problems("2026-07-28", kind, value) == []
    assert orjson.loads(orjson.dumps(value)) == orjson.loads(raw)
    if not (isinstance(value, dict) and value.get("jsonrpc") == "2.0"):
        return
    message = rpc.classify(value)
    rebuilt = rebuild(message)
    if "params" not in value and "params" in rebuilt and not rebuilt["params"]:
        del rebuilt["params"]
    assert rebuilt == value
    if isinstance(message, rpc.Request) and is_stateless_request(message.params):
        meta = read_request_meta(message.params, SUPPORTED_VERSIONS)
        assert meta.version == "2026-07-28"
    if isinstance(message, rpc.Response):
        assert result_type(message.result) in ("complete", "input_required")


def test_the_schema_check_catches_a_result_without_result_type() -> None:
    broken = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    assert problems("2026-07-28", "CallToolResultResponse", broken) != []
    assert (
        problems(
            "2026-07-28",
            "CallToolResultResponse",
            {**broken, "result": {"content": [], "resultType": "complete"}},
        )
        == []
    )
