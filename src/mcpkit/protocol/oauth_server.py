"""An OAuth 2.1 authorization server's rules as pure functions: what mcpkit's login proxy decides. No I/O.

The metadata it publishes (RFC 8414 §2), an authorization request checked in the order that keeps a bad
request from becoming an open redirect (OAuth 2.1 §4.1.2.1: the client and its exact redirect URI first, and
only then errors sent back to it), PKCE with S256 only (RFC 7636 §4.6), and the values a token request
must repeat. Client registration rules are in protocol/oauth_clients.py.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .resource_auth import same_resource

__all__ = [
    "AuthorizationRequest",
    "OAuthError",
    "authorization_request",
    "checked_redirect_uri",
    "granted_scopes",
    "narrowed_scopes",
    "pkce_challenge",
    "pkce_matches",
    "requested_resource",
    "server_metadata",
    "with_query",
]

# code_verifier = 43*128unreserved (RFC 7636 §4.1); an S256 challenge is 43 base64url characters (§4.2)
_VERIFIER: Final = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE: Final = re.compile(r"[A-Za-z0-9\-_]{43}")
_MAX_STATE: Final = 1024


class OAuthError(Exception):
    """An OAuth error response: its code (RFC 6749 §4.1.2.1, §5.2) and description; `status` for the
    token, registration and revocation endpoints, which answer it as JSON."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        """The JSON error body."""
        return {"error": self.error, "error_description": self.description}


@dataclass(frozen=True)
class AuthorizationRequest:
    """A checked authorization request: the client, where the code goes, and what it asks for."""

    client_id: str
    redirect_uri: str
    state: str | None
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str


def server_metadata(issuer: str, scopes: Sequence[str], paths: Mapping[str, str]) -> dict[str, Any]:
    """The Authorization Server Metadata (RFC 8414 §2) for `issuer`, its endpoints at `paths` (keys:
    authorization, token, registration, revocation), advertising client ID metadata documents
    (MCP basic/authorization "Client ID Metadata Documents")."""
    base = issuer.rstrip("/")
    return {
        "issuer": issuer,
        "authorization_endpoint": base + paths["authorization"],
        "token_endpoint": base + paths["token"],
        "registration_endpoint": base + paths["registration"],
        "revocation_endpoint": base + paths["revocation"],
        "scopes_supported": list(scopes),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
    }


def checked_redirect_uri(requested: str | None, registered: Sequence[str]) -> str:
    """The redirect URI to send the answer to: `requested` only if it is exactly one of `registered`
    (OAuth 2.1 §2.3.1, simple string comparison), or the only registered one when none is requested.

    Raises OAuthError; the caller shows it to the user and never redirects (no open redirect)."""
    if requested is None:
        if len(registered) == 1:
            return registered[0]
        raise OAuthError("invalid_request", "redirect_uri is required: the client registered several")
    if requested not in registered:
        raise OAuthError("invalid_request", "redirect_uri is not one this client registered")
    return requested


def authorization_request(
    params: Mapping[str, str], client_id: str, redirect_uri: str, scopes: Sequence[str], resource: str
) -> AuthorizationRequest:
    """The request's checked values, once its client and redirect URI are known good.

    Raises OAuthError, which may be sent back to `redirect_uri` (with the request's state)."""
    if params.get("response_type") != "code":
        raise OAuthError("unsupported_response_type", "only response_type=code is supported")
    method, challenge = params.get("code_challenge_method"), params.get("code_challenge")
    if method != "S256":
        raise OAuthError("invalid_request", "PKCE with code_challenge_method=S256 is required")
    if challenge is None or not _CHALLENGE.fullmatch(challenge):
        raise OAuthError("invalid_request", "code_challenge must be an S256 challenge")
    state = params.get("state")
    if state is not None and len(state) > _MAX_STATE:
        raise OAuthError("invalid_request", "state is too long")
    return AuthorizationRequest(
        client_id=client_id,
        redirect_uri=redirect_uri,
        state=state,
        code_challenge=challenge,
        scopes=granted_scopes(params.get("scope"), scopes),
        resource=requested_resource(params.get("resource"), resource),
    )


def granted_scopes(requested: str | None, supported: Sequence[str]) -> tuple[str, ...]:
    """The scopes a request asks for, all `supported` ones when it names none; an unknown one is an
    invalid_scope error (RFC 6749 §4.1.2.1)."""
    if not requested or not requested.strip():
        return tuple(supported)
    asked = tuple(dict.fromkeys(requested.split()))
    unknown = [s for s in asked if s not in supported]
    if unknown:
        raise OAuthError("invalid_scope", f"unknown scope {unknown[0]!r}")
    return asked


def requested_resource(requested: str | None, resource: str) -> str:
    """The resource tokens will be for: this server's (RFC 8707 §2 `invalid_target` for any other)."""
    if requested is not None and not same_resource(requested, resource):
        raise OAuthError("invalid_target", "tokens are issued only for this server's resource")
    return resource


def narrowed_scopes(requested: str | None, granted: Sequence[str]) -> tuple[str, ...]:
    """The scopes of a refreshed token: the grant's, or a subset of them (RFC 6749 §6)."""
    if not requested:
        return tuple(granted)
    asked = tuple(dict.fromkeys(requested.split()))
    if any(s not in granted for s in asked):
        raise OAuthError("invalid_scope", "a refresh may not add scopes the grant did not have")
    return asked


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of `verifier` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_matches(verifier: str | None, challenge: str) -> bool:
    """Whether `verifier` is well formed and its S256 challenge is `challenge` (RFC 7636 §4.6)."""
    if verifier is None or not _VERIFIER.fullmatch(verifier):
        return False
    return hmac.compare_digest(pkce_challenge(verifier), challenge)


def with_query(url: str, params: Mapping[str, str | None]) -> str:
    """`url` with `params` (None values left out) added to its query, keeping the query it had
    (OAuth 2.1 §4.1.2: the redirect URI's own query is retained)."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    pairs += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(pairs), ""))
