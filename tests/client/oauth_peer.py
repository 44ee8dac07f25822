"""A small OAuth 2.1 authorization server and an MCP endpoint it protects, as one ASGI app for tests.

Paths: /.well-known/oauth-protected-resource/mcp (RFC 9728), /.well-known/oauth-authorization-server/as
(RFC 8414, issuer <base>/as), /as/authorize (approves at once), /as/token, /as/register, and /mcp (a
mcpkit server behind a Bearer check: every call needs `read`, tools/call also `write`). What clients
sent is kept in `seen` for the tests to inspect; `settings.issuer_path` moves the authorization server.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

from mcpkit.server.server import Server
from mcpkit.transports.http_server import StreamableHTTPApp

JSON = dict[str, Any]


def tool_server() -> Server:
    server = Server("protected")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


@dataclass
class Settings:
    scopes_supported: list[str] = field(default_factory=lambda: ["read", "write"])
    challenge_scope: str | None = "read"
    expires_in: int = 3600
    issue_refresh_tokens: bool = True
    iss_in_redirect: str | None = None  # sent as `iss` when set
    never_enough_scope: bool = False  # every authorized call gets 403 insufficient_scope
    clients: dict[str, str | None] = field(default_factory=lambda: {"pre-registered": "s3cret"})
    cimd: bool = False  # advertise client_id_metadata_document_supported (https client ids are public)
    pkce: bool = True  # list S256 in code_challenge_methods_supported
    prm_resource: str | None = None  # a resource identifier other than <base>/mcp
    metadata_issuer: str | None = None  # an issuer in the metadata other than the one it was fetched for
    issuer_path: str = "/as"  # where the one authorization server lives; a test may move it
    legacy: bool = False  # a 2025-03-26 server: no metadata at all, endpoints /authorize /token /register
    authorization_endpoint: str | None = None  # advertised instead of <issuer>/authorize
    token_endpoint: str | None = None  # advertised instead of <issuer>/token
    resource_metadata_url: str | None = None  # named in the 401 challenge instead of the real one


class AuthorizedMCP:
    """The ASGI app; `base` is its own URL once served (set by the test)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.base = ""
        self.mcp = StreamableHTTPApp(tool_server())
        self.tokens: dict[str, set[str]] = {}
        self.refresh_tokens: dict[str, set[str]] = {}
        self.codes: dict[str, JSON] = {}
        self.seen: dict[str, list[JSON]] = {"authorize": [], "token": [], "register": [], "denied": []}

    async def __call__(self, scope: JSON, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if not self.base:
            host, port = scope["server"]
            self.base = f"http://{host}:{port}"
        path, body = scope["path"], await _body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        at = "" if self.settings.legacy else self.settings.issuer_path
        routes = {f"{at}/register": self.register, f"{at}/token": self.token}
        if not self.settings.legacy:
            routes["/.well-known/oauth-protected-resource/mcp"] = self.resource_metadata
            routes[f"/.well-known/oauth-authorization-server{at}"] = self.server_metadata
        if path in routes:
            status, reply, extra = routes[path](body, headers)
            await _send(send, status, json.dumps(reply).encode(), extra)
        elif path == f"{at}/authorize":
            query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
            await _send(send, 302, b"", [("location", self.authorize(query))])
        elif path == "/mcp":
            await self.protected(scope, body, headers, receive, send)
        else:
            await _send(send, 404, b"{}", [])

    # ---- metadata and registration --------------------------------------------------------------

    def resource_metadata(self, body: bytes, headers: dict[str, str]) -> tuple[int, JSON, list[Any]]:
        prm: JSON = {
            "resource": self.settings.prm_resource or f"{self.base}/mcp",
            "authorization_servers": [f"{self.base}{self.settings.issuer_path}"],
        }
        if self.settings.scopes_supported:
            prm["scopes_supported"] = [s for s in self.settings.scopes_supported if s != "offline_access"]
        return 200, prm, []

    def server_metadata(self, body: bytes, headers: dict[str, str]) -> tuple[int, JSON, list[Any]]:
        issuer = f"{self.base}{self.settings.issuer_path}"
        return (
            200,
            {
                "issuer": self.settings.metadata_issuer or issuer,
                "authorization_endpoint": self.settings.authorization_endpoint or f"{issuer}/authorize",
                "token_endpoint": self.settings.token_endpoint or f"{issuer}/token",
                "registration_endpoint": f"{issuer}/register",
                "response_types_supported": ["code"],
                **({"code_challenge_methods_supported": ["S256"]} if self.settings.pkce else {}),
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                "scopes_supported": self.settings.scopes_supported,
                "client_id_metadata_document_supported": self.settings.cimd,
            },
            [],
        )

    def register(self, body: bytes, headers: dict[str, str]) -> tuple[int, JSON, list[Any]]:
        request = json.loads(body)
        self.seen["register"].append({**request, "at": self.settings.issuer_path})
        client_id = f"dcr-{len(self.settings.clients)}"
        self.settings.clients[client_id] = None
        return 201, {**request, "client_id": client_id, "token_endpoint_auth_method": "none"}, []

    # ---- authorization and tokens ---------------------------------------------------------------

    def authorize(self, query: JSON) -> str:
        self.seen["authorize"].append({**query, "at": self.settings.issuer_path})
        code = secrets.token_urlsafe(8)
        self.codes[code] = query
        reply = {"code": code, "state": query.get("state", "")}
        if self.settings.iss_in_redirect is not None:
            reply["iss"] = self.settings.iss_in_redirect
        return f"{query['redirect_uri']}?{urlencode(reply)}"

    def token(self, body: bytes, headers: dict[str, str]) -> tuple[int, JSON, list[Any]]:
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        self.seen["token"].append({**form, "authorization": headers.get("authorization")})
        client_id = self._authenticated_client(form, headers)
        if client_id is None:
            return 401, {"error": "invalid_client"}, []
        grant = form.get("grant_type")
        if grant == "authorization_code":
            request = self.codes.pop(form.get("code", ""), None)
            if request is None or _s256(form.get("code_verifier", "")) != request["code_challenge"]:
                return 400, {"error": "invalid_grant"}, []
            scopes = set(request.get("scope", "").split())
        elif grant == "refresh_token" and form.get("refresh_token") in self.refresh_tokens:
            scopes = self.refresh_tokens.pop(form["refresh_token"])
        elif grant == "client_credentials":
            scopes = set(form.get("scope", "").split())
        else:
            return 400, {"error": "invalid_grant"}, []
        return 200, self._issue(scopes), []

    def _authenticated_client(self, form: JSON, headers: dict[str, str]) -> str | None:
        auth = headers.get("authorization", "")
        if auth.startswith("Basic "):
            client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            return client_id if self.settings.clients.get(client_id) == secret else None
        client_id = form.get("client_id", "")
        known = client_id in self.settings.clients and self.settings.clients[client_id] is None
        by_document = self.settings.cimd and client_id.startswith("https://")
        return client_id if known or by_document else None

    def _issue(self, scopes: set[str]) -> JSON:
        access = "at-" + secrets.token_urlsafe(8)
        self.tokens[access] = scopes
        reply: JSON = {"access_token": access, "token_type": "Bearer", "expires_in": self.settings.expires_in}
        reply["scope"] = " ".join(sorted(scopes))
        if self.settings.issue_refresh_tokens:
            refresh = "rt-" + secrets.token_urlsafe(8)
            self.refresh_tokens[refresh] = scopes
            reply["refresh_token"] = refresh
        return reply

    # ---- the protected MCP endpoint -------------------------------------------------------------

    async def protected(
        self, scope: JSON, body: bytes, headers: dict[str, str], receive: Any, send: Any
    ) -> None:
        metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        if self.settings.legacy:
            metadata = f"{self.base}/nowhere"
        metadata = self.settings.resource_metadata_url or metadata
        token = headers.get("authorization", "").removeprefix("Bearer ")
        granted = self.tokens.get(token)
        method = json.loads(body).get("method") if body else None
        needed = {"read", "write"} if method == "tools/call" else {"read"}
        if granted is None:
            scope_param = (
                f', scope="{self.settings.challenge_scope}"' if self.settings.challenge_scope else ""
            )
            challenge = f'Bearer resource_metadata="{metadata}"{scope_param}'
            self.seen["denied"].append({"status": 401, "method": method})
            return await _send(send, 401, b'{"error":"invalid_token"}', [("www-authenticate", challenge)])
        if self.settings.never_enough_scope or not needed <= granted:
            wanted = " ".join(sorted(needed))
            challenge = f'Bearer error="insufficient_scope", scope="{wanted}", resource_metadata="{metadata}"'
            self.seen["denied"].append({"status": 403, "method": method})
            return await _send(
                send, 403, b'{"error":"insufficient_scope"}', [("www-authenticate", challenge)]
            )
        await self.mcp(scope, _replay(body, receive), send)


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """The body already read, then the connection's own receive (which reports the disconnect)."""
    done = False

    async def replay() -> JSON:
        nonlocal done
        if done:
            return dict(await receive())
        done = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _send(send: Any, status: int, body: bytes, headers: list[Any]) -> None:
    raw = [(k.encode(), v.encode()) for k, v in [("content-type", "application/json"), *headers]]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
