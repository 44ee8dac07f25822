"""Getting a client identity at an authorization server, in the spec's order of preference
("Client Registration Approaches"): pre-registered, a Client ID Metadata Document, Dynamic Client
Registration (RFC 7591)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from .discovery import ServerMetadata
from .errors import OAuthError
from .store import ClientCredentials
from .url_safety import secure_url_problem


@dataclass(frozen=True)
class ClientMetadata:
    """What the client says about itself when it registers (RFC 7591 §2)."""

    client_name: str = "mcpkit"
    redirect_uris: list[str] = field(default_factory=lambda: ["http://127.0.0.1:8976/callback"])
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    application_type: str = "native"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def wants_refresh_tokens(self) -> bool:
        return "refresh_token" in self.grant_types


def _registration_auth_method(metadata: ServerMetadata) -> str:
    supported = metadata.listed("token_endpoint_auth_methods_supported")
    if supported is None:
        return "client_secret_basic"
    for method in ("client_secret_basic", "client_secret_post", "none"):
        if method in supported:
            return method
    return supported[0] if supported else "none"


async def register(
    http: httpx.AsyncClient, metadata: ServerMetadata, client: ClientMetadata, scope: str | None
) -> ClientCredentials:
    """Dynamic Client Registration at the server's registration endpoint."""
    if not metadata.registration_endpoint:
        raise OAuthError("no_registration", f"{metadata.issuer} offers no way to register this client")
    problem = secure_url_problem(metadata.registration_endpoint)  # the answer may carry a client secret
    if problem is not None:
        raise OAuthError("unsafe_url", f"registration endpoint {problem}")
    body: dict[str, Any] = {
        "client_name": client.client_name,
        "redirect_uris": client.redirect_uris,
        "grant_types": client.grant_types,
        "response_types": ["code"] if "authorization_code" in client.grant_types else [],
        "token_endpoint_auth_method": _registration_auth_method(metadata),
        "application_type": client.application_type,
        **({"scope": scope} if scope else {}),
        **client.extra,
    }
    try:
        response = await http.post(metadata.registration_endpoint, json=body)
    except httpx.HTTPError as exc:
        raise OAuthError("registration_failed", str(exc)) from exc
    if response.status_code not in (200, 201):
        raise OAuthError("registration_failed", f"HTTP {response.status_code}: {response.text[:200]}")
    info = response.json()
    if not isinstance(info, dict) or "client_id" not in info:
        raise OAuthError("registration_failed", "the registration response has no client_id")
    return ClientCredentials(
        client_id=str(info["client_id"]),
        client_secret=info.get("client_secret"),
        token_endpoint_auth_method=info.get("token_endpoint_auth_method")
        or body["token_endpoint_auth_method"],
    )


def metadata_document_client(url: str) -> ClientCredentials:
    """A client whose id is the HTTPS URL of its metadata document: a public client (no secret)."""
    return ClientCredentials(client_id=url, token_endpoint_auth_method="none")
