"""What the client keeps between authorizations: tokens and client credentials, each per issuer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Tokens:
    """A token response (RFC 6749 §5.1) with the moment it expires on this clock."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    scope: str | None = None
    expires_at: float | None = None

    @classmethod
    def from_response(cls, body: dict[str, Any], requested_scope: str | None = None) -> Tokens:
        expires_in = body.get("expires_in")
        return cls(
            access_token=str(body["access_token"]),
            token_type=str(body.get("token_type") or "Bearer"),
            refresh_token=body.get("refresh_token"),
            scope=body.get("scope") or requested_scope,
            expires_at=time.time() + float(expires_in) if isinstance(expires_in, (int, float)) else None,
        )

    def expired(self, leeway: float = 30.0) -> bool:
        return self.expires_at is not None and time.time() + leeway >= self.expires_at


@dataclass(frozen=True)
class ClientCredentials:
    """A client's identity at one authorization server: registered, pre-registered or a metadata URL."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    private_key_pem: str | None = None
    signing_algorithm: str = "RS256"


class TokenStore(Protocol):
    """Storage keyed by authorization server issuer, so nothing one issuer gave is shown to another."""

    async def get_tokens(self, issuer: str) -> Tokens | None: ...
    async def set_tokens(self, issuer: str, tokens: Tokens | None) -> None: ...
    async def get_client(self, issuer: str) -> ClientCredentials | None: ...
    async def set_client(self, issuer: str, client: ClientCredentials | None) -> None: ...


class InMemoryTokenStore:
    """A TokenStore in this process's memory."""

    def __init__(self) -> None:
        self._tokens: dict[str, Tokens] = {}
        self._clients: dict[str, ClientCredentials] = {}

    async def get_tokens(self, issuer: str) -> Tokens | None:
        return self._tokens.get(issuer)

    async def set_tokens(self, issuer: str, tokens: Tokens | None) -> None:
        if tokens is None:
            self._tokens.pop(issuer, None)
        else:
            self._tokens[issuer] = tokens

    async def get_client(self, issuer: str) -> ClientCredentials | None:
        return self._clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientCredentials | None) -> None:
        if client is None:
            self._clients.pop(issuer, None)
        else:
            self._clients[issuer] = client
