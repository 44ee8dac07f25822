"""On a protected server a session, and a sealed requestState, belong to the principal whose token made
them (Security Best Practices, "Session Hijacking": bind session ids to user-specific information).
Two clients of the real authorization server (npm oidc-provider) try each other's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from auth_server import RESOURCE, AuthServer, authorization_server, protected

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import initialize_params
from raw_caller import BASE, META, answer_of

pytestmark = pytest.mark.anyio

V = "2026-07-28"


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


def asking_server() -> Server:
    server = Server("bound")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("name?", schema, key="who")
        return f"hi {(answer.content or {}).get('name')}"

    return server


async def rpc(
    http: httpx.AsyncClient, token: str, rid: int, method: str, params: dict[str, Any], **headers: str
) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    auth = {"authorization": f"Bearer {token}"}
    return await http.post(RESOURCE, content=json.dumps(message), headers={**BASE, **auth, **headers})


@requirement("security-session-binding")
async def test_a_session_answers_only_the_principal_that_opened_it(provider: AuthServer) -> None:
    alice = await provider.token(client="mcp-service")
    mallory = await provider.token(client="mcp-other")
    async with protected(provider, StreamableHTTPApp(asking_server())), httpx.AsyncClient() as http:
        opened = await rpc(http, alice, 1, "initialize", initialize_params())
        sid = opened.headers["mcp-session-id"]
        session = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(RESOURCE, json=note, headers={**BASE, **session, "authorization": f"Bearer {alice}"})
        stolen_post = await rpc(
            http, mallory, 2, "tools/call", {"name": "echo", "arguments": {"text": "x"}}, **session
        )
        stolen_get = await http.get(
            RESOURCE, headers={"accept": "text/event-stream", **session, "authorization": f"Bearer {mallory}"}
        )
        stolen_delete = await http.delete(RESOURCE, headers={**session, "authorization": f"Bearer {mallory}"})
        owner = await rpc(
            http, alice, 3, "tools/call", {"name": "echo", "arguments": {"text": "mine"}}, **session
        )
    assert opened.status_code == 200
    assert stolen_post.status_code == stolen_get.status_code == stolen_delete.status_code == 404
    assert owner.status_code == 200
    assert answer_of(owner)["result"]["content"][0]["text"] == "mine"


MODERN = {"mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "ask"}


def stateless_call(rid: int, **params: Any) -> dict[str, Any]:
    meta = {META + "protocolVersion": V, META + "clientCapabilities": {"elicitation": {}}}
    return {"name": "ask", "arguments": {}, "_meta": meta, **params}


async def test_a_request_state_is_refused_when_another_principal_returns_it(provider: AuthServer) -> None:
    alice = await provider.token(client="mcp-service")
    mallory = await provider.token(client="mcp-other")
    reply = {"who": {"action": "accept", "content": {"name": "Ada"}}}
    async with protected(provider, StreamableHTTPApp(asking_server())), httpx.AsyncClient() as http:
        first = answer_of(await rpc(http, alice, 1, "tools/call", stateless_call(1), **MODERN))["result"]
        state = first["requestState"]
        stolen = await rpc(
            http,
            mallory,
            2,
            "tools/call",
            stateless_call(2, requestState=state, inputResponses=reply),
            **MODERN,
        )
        retry = stateless_call(3, requestState=state, inputResponses=reply)
        own = await rpc(http, alice, 3, "tools/call", retry, **MODERN)
    assert first["resultType"] == "input_required"
    error = answer_of(stolen)["error"]
    assert error["code"] == -32602 and "different request" in error["message"]
    assert answer_of(own)["result"]["content"][0]["text"] == "hi Ada"
