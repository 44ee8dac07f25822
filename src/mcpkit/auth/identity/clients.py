"""The clients the login proxy knows: registered dynamically (RFC 7591), or named by the URL of their Client
ID Metadata Document, fetched when first seen and kept a few minutes (MCP basic/authorization).

A document's URL is a stranger's, so fetching it must not reach the server's own network (server-side
request forgery, the draft's security considerations): its host is resolved here, every address checked,
and the request sent to the checked address (so a name that resolves otherwise a moment later changes
nothing), never following a redirect."""

from __future__ import annotations

import hmac
import socket
import time
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx
import orjson

from ...protocol.oauth_clients import (
    ClientInfo,
    client_from_document,
    client_from_registration,
    fetch_address_problem,
    is_document_client_id,
)
from ...protocol.oauth_server import OAuthError
from ..verifier import VerifierUnavailable, fetch_json
from .sealing import digest, new_secret
from .store import IdentityStore

__all__ = ["ClientRegistry"]

_DOCUMENT_BYTES: Final = 5 * 1024  # the draft's suggested limit for a metadata document


class ClientRegistry:
    """Registers clients and finds them again; `document_ttl` seconds is how long a fetched metadata
    document is trusted before it is fetched again. `allow_http_client_ids` lets http:// URLs name
    documents (for tests on loopback only: a document's origin is what vouches for the client);
    `allow_private_client_ids` lets them be fetched from private, loopback and link-local addresses
    (development and tests only)."""

    def __init__(
        self,
        store: IdentityStore,
        http: httpx.AsyncClient,
        *,
        client_ttl: float = 90 * 86400,
        document_ttl: float = 300,
        allow_http_client_ids: bool = False,
        allow_private_client_ids: bool = False,
    ) -> None:
        self.store = store
        self.http = http
        self.client_ttl = client_ttl
        self.document_ttl = document_ttl
        self.allow_http_client_ids = allow_http_client_ids
        self.allow_private_client_ids = allow_private_client_ids

    async def register(self, metadata: Any) -> dict[str, Any]:
        """The registration response (RFC 7591 §3.2.1) for a client described by `metadata`."""
        if not isinstance(metadata, dict):
            raise OAuthError("invalid_client_metadata", "the registration body must be a JSON object")
        info = client_from_registration(metadata, "mcp-" + new_secret()[:32])
        secret = new_secret() if info.auth_method != "none" else None
        record = {"client": info.to_json(), "secret": digest(secret) if secret else None}
        await self.store.put(f"client:{info.client_id}", orjson.dumps(record), self.client_ttl)
        answer: dict[str, Any] = {
            **{k: v for k, v in info.to_json().items() if v is not None and k != "from_document"},
            "response_types": ["code"],
            "client_id_issued_at": int(time.time()),
        }
        if secret is not None:
            answer |= {"client_secret": secret, "client_secret_expires_at": 0}
        return answer

    async def find(self, client_id: str) -> ClientInfo | None:
        """The client `client_id` names, or None when it is unknown (or its document is unusable).

        Raises OAuthError invalid_client when its document is on an address the server may not fetch."""
        if is_document_client_id(client_id, self.allow_http_client_ids):
            return await self._from_document(client_id)
        raw = await self.store.get(f"client:{client_id}")
        return ClientInfo.from_json(orjson.loads(raw)["client"]) if raw is not None else None

    async def authenticate(self, client_id: str, secret: str | None) -> ClientInfo:
        """The client, if `secret` is how it authenticates (none for public clients: no secret at all).

        Raises OAuthError invalid_client (RFC 6749 §5.2)."""
        info = await self.find(client_id)
        if info is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if info.auth_method == "none":
            if secret is not None:
                raise OAuthError("invalid_client", "this client has no secret", 401)
            return info
        raw = await self.store.get(f"client:{client_id}")
        expected = orjson.loads(raw)["secret"] if raw is not None else None
        if secret is None or expected is None or not hmac.compare_digest(digest(secret), expected):
            raise OAuthError("invalid_client", "client authentication failed", 401)
        return info

    async def _from_document(self, client_id: str) -> ClientInfo | None:
        key = f"client-document:{digest(client_id)}"
        cached = await self.store.get(key)
        if cached is not None:
            return ClientInfo.from_json(orjson.loads(cached))
        targets, host = await checked_targets(client_id, self.allow_private_client_ids)
        found = await _fetch_pinned(self.http, targets, host, urlsplit(client_id).hostname or "")
        if found is None:
            return None
        status, document = found
        if status != 200 or document is None:
            return None
        try:
            info = client_from_document(client_id, document)
        except OAuthError:
            return None
        await self.store.put(key, orjson.dumps(info.to_json()), self.document_ttl)
        return info


async def checked_targets(url: str, allow_private: bool = False) -> tuple[list[str], str]:
    """`url` with its host replaced by each address it resolves to, and the Host header to send; OAuthError
    invalid_client when the host does not resolve or any of its addresses is not public (unless
    `allow_private`)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise OAuthError(
            "invalid_client", f"the client's metadata document host {host} does not resolve"
        ) from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    for address in addresses if not allow_private else ():
        problem = fetch_address_problem(address)
        if problem is not None:
            raise OAuthError(
                "invalid_client",
                f"the client's metadata document at {host} is not fetched: {problem}",
            )
    targets = []
    for address in addresses:
        pinned = f"[{address}]" if ":" in address else address
        netloc = f"{pinned}:{parts.port}" if parts.port else pinned
        targets.append(urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")))
    return targets, parts.netloc


async def _fetch_pinned(
    http: httpx.AsyncClient, targets: list[str], host: str, server_name: str
) -> tuple[int, dict[str, Any] | None] | None:
    """The document from the first of `targets` that connects (None when none does, or the fetch fails
    otherwise); TLS checks the certificate against `server_name`, as for the URL itself."""
    for target in targets:
        try:
            return await fetch_json(
                http,
                "GET",
                target,
                _DOCUMENT_BYTES,
                # one connection a fetch: a pooled one to this address was verified for another name
                headers={"accept": "application/json", "host": host, "connection": "close"},
                extensions={"sni_hostname": server_name},
                follow_redirects=False,
            )
        except VerifierUnavailable as exc:
            if not isinstance(exc.__cause__, httpx.ConnectError):
                return None
    return None
