"""Fuzzing Streamable HTTP: a real uvicorn in this process takes mutated bodies and mutated headers.

Both a handshake session and stateless 2026-07-28 requests share the endpoint. Whatever is posted,
the answer is never a 5xx and never a hang; a refusal carries a JSON-RPC error body; a request that
is accepted gets its response; and after every example a valid call on the session and a valid
stateless call are still served.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeGuard

import anyio.from_thread
import httpx
import orjson
import pytest
from fuzz_messages import (
    HANDSHAKE_SEEDS,
    MODERN,
    MODERN_SEEDS,
    SENTINEL,
    budget,
    examples_available,
    initialize,
    request,
    stateless_request,
    wire_bytes,
    without_long_lived,
)
from fuzz_oracle import check_replies, check_reply_shape, internal_errors, parsed
from fuzz_server import server
from hypothesis import given as given_
from hypothesis import strategies as st

import peers
from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.skipif(not examples_available(), reason="needs ../shared/spec beside the checkout")

BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
WAIT = 10.0  # seconds an answer may take before the server counts as hung


class Endpoint:
    """The URL of a real uvicorn serving the fuzz server, a client, and one open handshake session."""

    def __init__(self, url: str, http: httpx.Client) -> None:
        self.url, self.http = url, http
        response = http.post(url, content=orjson.dumps(initialize(SENTINEL + "init")), headers=BASE)
        assert response.status_code == 200, response.text
        self.session = {
            **BASE,
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        assert http.post(url, content=note, headers=self.session).status_code == 202

    def post(self, body: bytes, headers: dict[str, Any]) -> httpx.Response:
        try:
            return self.http.post(self.url, content=body, headers=headers)
        except httpx.TimeoutException:
            pytest.fail(f"no answer within {WAIT} s to {body[:300]!r} with {headers}")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Endpoint]:
    app = StreamableHTTPApp(server)
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(peers.serving(app)) as url,
        httpx.Client(timeout=WAIT) as http,
    ):
        yield Endpoint(url, http)


def stateless_headers(message: Any) -> dict[str, str]:
    """The headers a 2026-07-28 client derives from the body (transports "Standard Headers")."""
    headers = {**BASE, "mcp-protocol-version": MODERN}
    method = message.get("method") if isinstance(message, dict) else None
    if _sendable(method):
        headers["mcp-method"] = method
        params = message.get("params")
        key = "uri" if method == "resources/read" else "name"
        name = params.get(key) if isinstance(params, dict) else None
        if _sendable(name):
            headers["mcp-name"] = name
    return headers


def _sendable(value: object) -> TypeGuard[str]:
    """What an HTTP client can put in a header as it is (others are left out, not encoded)."""
    return isinstance(value, str) and value.isascii() and value.isprintable() and value == value.strip()


_HEADER_VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "2026-07-28",
            "2025-11-25",
            "2025-03-26",
            "1900-01-01",
            "application/json",
            "text/event-stream",
            "application/json; charset=utf-8",
            "text/plain",
            "*/*",
            "none",
            "tools/call",
            "tools/list",
            "initialize",
            "get_weather",
            "a" * 5000,
        ]
    ),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40).map(str.strip),
    st.binary(max_size=20).map(lambda b: bytes(c for c in b if c > 0x20 and c != 0x7F)),  # latin-1
)
_HEADER_NAMES = st.sampled_from(
    ["mcp-protocol-version", "mcp-session-id", "content-type", "accept", "mcp-method", "mcp-name"]
)


@st.composite
def mutated_headers(draw: st.DrawFn, headers: dict[str, Any]) -> dict[str, Any]:
    """Usually the headers as they were; sometimes one or two dropped or given another value."""
    headers = dict(headers)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
        name = draw(_HEADER_NAMES)
        if draw(st.booleans()):
            headers.pop(name, None)
        else:
            headers[name] = draw(_HEADER_VALUES)
    return headers


def replies_in(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages in a response body, whichever way the server chose to send them."""
    if not response.content:
        return []
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return [orjson.loads(e.data) for e in SSEDecoder().feed(response.content) if e.data]
    assert kind.startswith("application/json"), f"{response.status_code} with {kind!r}: {response.text}"
    return [orjson.loads(response.content)]


def check_exchange(message: Any, headers: dict[str, Any], response: httpx.Response) -> None:
    """The properties every answer has, whatever was posted."""
    status = response.status_code
    assert status < 500, f"{status} for {message!r} with {headers}: {response.text}"
    replies = replies_in(response)
    if status >= 400:
        [error] = replies  # a refusal is one JSON-RPC error (transports "Sending Messages to the Server")
        check_reply_shape(error)
        rid = message.get("id") if isinstance(message, dict) else None
        assert "error" in error and error["id"] in (None, rid), error
        return
    if status == 202:
        assert replies == [], "202 Accepted has no body"
        check_replies([message], [])  # accepted without an answer: it must not have been a request
        return
    assert status == 200, f"{status}: {response.text}"
    check_replies([message], replies)
    assert internal_errors([message], replies) == []


def still_serves(endpoint: Endpoint) -> None:
    call = {"name": "echo", "arguments": {"text": "still here"}}
    on_session = endpoint.post(orjson.dumps(request(SENTINEL + "1", "tools/call", call)), endpoint.session)
    stateless = stateless_request(SENTINEL + "2", "tools/call", call)
    alone = endpoint.post(orjson.dumps(stateless), stateless_headers(stateless) | {"mcp-name": "echo"})
    for response in (on_session, alone):
        assert response.status_code == 200, response.text
        [answer] = [r for r in replies_in(response) if "id" in r]
        assert answer["result"]["content"] == [{"type": "text", "text": "still here"}], answer


SEEDS = without_long_lived(HANDSHAKE_SEEDS + MODERN_SEEDS)


@budget(500)
@given_(data=st.data(), wire=wire_bytes(SEEDS))
def test_a_handshake_session_takes_mutated_posts_without_a_5xx_and_keeps_serving(
    endpoint: Endpoint, data: st.DataObject, wire: tuple[Any, bytes]
) -> None:
    _, body = wire
    headers = data.draw(mutated_headers(endpoint.session))
    message = parsed(body)
    check_exchange(message, headers, endpoint.post(body, headers))
    still_serves(endpoint)


@budget(500)
@given_(data=st.data(), wire=wire_bytes(without_long_lived(MODERN_SEEDS + HANDSHAKE_SEEDS)))
def test_stateless_posts_take_mutated_bodies_and_headers_without_a_5xx_and_keep_serving(
    endpoint: Endpoint, data: st.DataObject, wire: tuple[Any, bytes]
) -> None:
    value, body = wire
    headers = data.draw(mutated_headers(stateless_headers(value)))
    message = parsed(body)
    check_exchange(message, headers, endpoint.post(body, headers))
    still_serves(endpoint)
