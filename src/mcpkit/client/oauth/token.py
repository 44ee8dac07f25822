"""The token endpoint: client authentication (RFC 6749 §2.3, RFC 7523 §2.2) and the grants' requests."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
import uuid
from typing import Any
from urllib.parse import quote

import httpx

from .discovery import ServerMetadata
from .dpop import DPoP, post_token_request
from .errors import OAuthError
from .store import ClientCredentials, Tokens
from .url_safety import secure_url_problem

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_PREFERRED_SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier and its S256 challenge (RFC 7636 §4.1, §4.2)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def auth_method(client: ClientCredentials, metadata: ServerMetadata) -> str:
    """How this client authenticates at the token endpoint: what registration said, else what the
    server supports among what the client holds (RFC 8414 §2: client_secret_basic by default)."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    supported = metadata.listed("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if client.private_key_pem and "private_key_jwt" in supported:
        return "private_key_jwt"
    if client.client_secret:
        for method in _PREFERRED_SECRET_METHODS:
            if method in supported:
                return method
        return "client_secret_basic"
    return "none"


def client_assertion(client: ClientCredentials, audience: str) -> str:
    """A signed JWT naming the client to the authorization server (RFC 7523 §3)."""
    import jwt  # pyjwt[crypto]: only clients that hold a private key need it

    now = int(time.time())
    claims = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": str(uuid.uuid4()),
    }
    return jwt.encode(claims, client.private_key_pem or "", algorithm=client.signing_algorithm)


def authenticate(client: ClientCredentials, metadata: ServerMetadata, form: dict[str, str]) -> dict[str, str]:
    """Add the client's authentication to a token request's form; returns the request's headers."""
    method = auth_method(client, metadata)
    if method == "client_secret_basic":
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret or '', safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    form["client_id"] = client.client_id
    if method == "client_secret_post":
        form["client_secret"] = client.client_secret or ""
    elif method == "private_key_jwt":
        form["client_assertion_type"] = JWT_BEARER_ASSERTION
        form["client_assertion"] = client_assertion(client, metadata.issuer)
    return {}


async def request_token(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientCredentials,
    form: dict[str, str],
    dpop: DPoP | None = None,
) -> Tokens:
    """POST a grant to the token endpoint; the tokens, or OAuthError with the server's error code.
    With `dpop`, the request carries a proof where the server supports DPoP (RFC 9449 §5).
    Authorization "Communication Security": the endpoint must be https (http only on loopback), else
    OAuthError "unsafe_url" before anything, the client's secret least of all, is sent.
    """
    problem = secure_url_problem(metadata.token_endpoint)
    if problem is not None:
        raise OAuthError("unsafe_url", f"token endpoint {problem}")

    def build() -> tuple[dict[str, str], dict[str, str]]:
        fresh = dict(form)
        return fresh, {"Accept": "application/json", **authenticate(client, metadata, fresh)}

    proving = dpop if dpop is not None and dpop.used_at(metadata) else None
    try:
        response, form = await post_token_request(http, metadata.token_endpoint, build, proving)
    except httpx.HTTPError as exc:
        raise OAuthError("token_request_failed", str(exc)) from exc
    body = _json(response)
    if response.status_code != 200 or "access_token" not in body:
        error = str(body.get("error") or f"http_{response.status_code}")
        raise OAuthError(error, str(body.get("error_description") or ""))
    return Tokens.from_response(body, form.get("scope"))


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
