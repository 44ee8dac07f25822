"""The login proxy's machine-facing endpoints: token (authorization_code, refresh_token), revocation
(RFC 7009) and dynamic client registration (RFC 7591), answering OAuth errors as JSON."""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from ...protocol.oauth_clients import ClientInfo
from ...protocol.oauth_server import OAuthError, requested_resource
from ...transports.http_server.asgi import Receive, Scope, Send, read_body
from .clients import ClientRegistry
from .tokens import TokenService
from .web import basic_credentials, form, header, send_json

__all__ = ["register", "revoke", "token"]

_MAX_REGISTRATION = 16 * 1024


async def token(
    scope: Scope, receive: Receive, send: Send, clients: ClientRegistry, tokens: TokenService, resource: str
) -> None:
    """POST token: a token response, or its OAuth error (RFC 6749 §5.2)."""
    try:
        params = await form(scope, receive)
        client = await _client(scope, params, clients)
        if "resource" in params:
            requested_resource(params["resource"], resource)
        grant_type = params.get("grant_type")
        if grant_type is None:
            raise OAuthError("invalid_request", "grant_type is required")
        if grant_type not in ("authorization_code", "refresh_token"):
            raise OAuthError("unsupported_grant_type", f"grant_type {grant_type!r} is not supported")
        if grant_type not in client.grant_types:
            raise OAuthError("unauthorized_client", f"grant_type {grant_type!r} is not this client's")
        if grant_type == "authorization_code":
            answer = await tokens.redeem_code(params, client)
        else:
            answer = await tokens.refresh(params, client)
    except OAuthError as exc:
        challenge = [(b"www-authenticate", b'Basic realm="token"')] if exc.status == 401 else []
        await send_json(send, exc.status, exc.body(), challenge)
        return
    await send_json(send, 200, answer)


async def revoke(
    scope: Scope, receive: Receive, send: Send, clients: ClientRegistry, tokens: TokenService
) -> None:
    """POST revoke: 200 whether or not the token was live (RFC 7009 §2.2)."""
    try:
        params = await form(scope, receive)
        client = await _client(scope, params, clients)
        given = params.get("token")
        if not given:
            raise OAuthError("invalid_request", "token is required")
        await tokens.revoke(given, client)
    except OAuthError as exc:
        await send_json(send, exc.status, exc.body())
        return
    await send_json(send, 200, {})


async def register(scope: Scope, receive: Receive, send: Send, clients: ClientRegistry) -> None:
    """POST register: 201 with the client's id (and secret, unless it is a public client)."""
    try:
        if (header(scope, "content-type") or "").split(";")[0].strip().lower() != "application/json":
            raise OAuthError("invalid_client_metadata", "the registration body must be application/json")
        body = await read_body(
            {"content-length": header(scope, "content-length") or "0"}, receive, _MAX_REGISTRATION, 10.0
        )
        try:
            metadata = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise OAuthError("invalid_client_metadata", "the registration body is not JSON") from None
        answer = await clients.register(metadata)
    except OAuthError as exc:
        await send_json(send, exc.status, exc.body())
        return
    await send_json(send, 201, answer)


async def _client(scope: Scope, params: Mapping[str, str], clients: ClientRegistry) -> ClientInfo:
    """The calling client, authenticated by Basic credentials, the form's client_secret, or (a public
    client) by naming itself; one method only (OAuth 2.1 §2.4)."""
    basic = basic_credentials(scope)
    if basic is not None:
        if "client_secret" in params or params.get("client_id", basic[0]) != basic[0]:
            raise OAuthError("invalid_request", "use one client authentication method", 400)
        return await clients.authenticate(basic[0], basic[1])
    client_id = params.get("client_id")
    if not client_id:
        raise OAuthError("invalid_client", "client_id is required", 401)
    return await clients.authenticate(client_id, params.get("client_secret"))
