"""Answer verification shared by the stdio and HTTP workloads: a wrong answer fails the run."""

from __future__ import annotations

import orjson


class BenchError(Exception):
    """A wrong, missing or malformed answer: fails the run."""


def result_of(msg: dict, rid: int) -> dict:
    if msg.get("id") != rid:
        raise BenchError(f"response id {msg.get('id')!r} != request id {rid}")
    if "error" in msg:
        raise BenchError(f"error response to id {rid}: {msg['error']!r}")
    res = msg["result"]
    if not isinstance(res, dict):
        raise BenchError(f"result is not an object: {res!r}")
    return res


def tool_value(res: dict, what: str) -> object:
    """The value a tool returned, checked for agreement between content text and structuredContent."""
    if res.get("isError"):
        raise BenchError(f"{what}: tool error {res!r}")
    content = res.get("content")
    if not isinstance(content, list) or not content or content[0].get("type") != "text":
        raise BenchError(f"{what}: no text content in {str(res)[:200]}")
    text = content[0]["text"]
    sc = res.get("structuredContent")
    if sc is not None:
        if not isinstance(sc, dict) or "result" not in sc:
            raise BenchError(f"{what}: bad structuredContent {sc!r}")
        return sc["result"], text
    return None, text


def check_add(res: dict, expect: int) -> None:
    sc, text = tool_value(res, "add")
    if sc is not None and (sc != expect or type(sc) is not int):
        raise BenchError(f"add: structuredContent result {sc!r} != {expect}")
    # The text is either the bare number or the JSON of the structured content.
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise BenchError(f"add: text {text!r} is not JSON") from e
    if parsed != expect and parsed != {"result": expect}:
        raise BenchError(f"add: text {text!r} does not say {expect}")


def check_echo(res: dict, expect: str) -> None:
    sc, text = tool_value(res, "echo")
    if sc is not None and sc != expect:
        raise BenchError("echo: structuredContent differs from the input")
    if text != expect:
        try:
            ok = orjson.loads(text) == {"result": expect}
        except orjson.JSONDecodeError:
            ok = False
        if not ok:
            raise BenchError("echo: text differs from the input")
