"""The authorization code grant with PKCE (OAuth 2.1 §4.1): the request, the response's checks
(state, RFC 9207 `iss`), and the code's exchange at the token endpoint."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from .discovery import ServerMetadata
from .dpop import DPoP
from .errors import OAuthError
from .store import ClientCredentials, Tokens
from .token import pkce_pair, request_token
from .url_safety import secure_url_problem

# Shows the authorization URL to the user (or a browser) and returns the redirect URL that came back.
UserAgent = Callable[[str], Awaitable[str]]


def authorization_url(
    metadata: ServerMetadata,
    client_id: str,
    redirect_uri: str,
    challenge: str,
    state: str,
    resource: str,
    scope: str | None,
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
        **({"scope": scope} if scope else {}),
    }
    endpoint = metadata.authorization_endpoint
    return endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(params)


def code_from_redirect(redirect: str, state: str, metadata: ServerMetadata) -> str:
    """The code in an authorization response, once its state and issuer are the expected ones."""
    query = {k: v[0] for k, v in parse_qs(urlsplit(redirect).query).items()}
    if query.get("state") != state:
        raise OAuthError("invalid_state", "the authorization response's state is not the one sent")
    # RFC 9207 §2.4: compare iss by simple string comparison whenever it is present, and require it
    # when the server said it sends it.
    iss = query.get("iss")
    if iss is not None and iss != metadata.issuer:
        raise OAuthError("invalid_issuer", f"authorization response from {iss!r}, not {metadata.issuer!r}")
    if iss is None and metadata.iss_parameter_supported:
        raise OAuthError("invalid_issuer", "the authorization response lacks the iss it promised")
    if "error" in query:
        raise OAuthError(query["error"], query.get("error_description", ""))
    if not query.get("code"):
        raise OAuthError("invalid_response", "the authorization response has no code")
    return query["code"]


async def authorization_code_grant(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientCredentials,
    user_agent: UserAgent,
    *,
    redirect_uri: str,
    resource: str,
    scope: str | None,
    dpop: DPoP | None = None,
) -> Tokens:
    """Run one authorization: the user agent's round trip, then the code for tokens."""
    # "Authorization Code Protection": PKCE support is read from the metadata, and its absence is a
    # refusal; only the 2025-03-26 default endpoints (no metadata at all) go ahead on trust.
    if not metadata.raw.get("legacy_defaults") and not metadata.pkce_s256:
        raise OAuthError("pkce_unsupported", f"{metadata.issuer} does not list S256 PKCE support")
    # A javascript:, file: or plain-http endpoint never reaches the user agent (a browser opener).
    problem = secure_url_problem(metadata.authorization_endpoint)
    if problem is not None:
        raise OAuthError("unsafe_url", f"authorization endpoint {problem}")
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(24)
    url = authorization_url(metadata, client.client_id, redirect_uri, challenge, state, resource, scope)
    code = code_from_redirect(await user_agent(url), state, metadata)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": resource,
    }
    tokens = await request_token(http, metadata, client, form, dpop)
    return tokens if tokens.scope or not scope else replace(tokens, scope=scope)
