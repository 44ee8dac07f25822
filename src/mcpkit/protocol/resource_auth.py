"""The MCP server as an OAuth 2.1 resource server: its rules as pure functions (basic/authorization). No I/O.

A protected server publishes Protected Resource Metadata (RFC 9728) at the well-known URIs derived from its
resource URL, reads the access token from the Authorization header only (OAuth 2.1 §5.1.1; never the query
string), refuses a missing or invalid token with 401 and a Bearer challenge naming the metadata (RFC 9728
§5.1, RFC 6750 §3), a token without the needed scopes with 403 "insufficient_scope", and a token issued for
another resource (RFC 8707 §2: no token passthrough) as invalid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import orjson

__all__ = [
    "WELL_KNOWN",
    "AccessToken",
    "AuthRefusal",
    "InvalidToken",
    "audiences_of",
    "bearer_token",
    "challenge",
    "check_times",
    "credentials",
    "metadata_document",
    "metadata_paths",
    "metadata_url",
    "missing_scopes",
    "query_carries_token",
    "same_resource",
    "scope_challenge",
    "token_from_claims",
    "www_authenticate",
]

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
# b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" (RFC 6750 §2.1)
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# error_description and scope values are limited to these characters (RFC 6750 §3)
_UNSAFE: Final = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True)
class AccessToken:
    """A verified access token: who it speaks for, what it allows, until when, and for which resources."""

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    expires_at: float | None
    audience: tuple[str, ...]
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def principal(self) -> str:
        """Who the token speaks for, as one unambiguous string (issuer, client, subject): what a
        session or a sealed requestState is bound to (Security Best Practices, "Session Hijacking")."""
        return orjson.dumps([self.claims.get("iss"), self.client_id, self.subject]).decode()


class InvalidToken(Exception):
    """The token is not acceptable here (malformed, expired, revoked, wrong issuer, audience, or key)."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


@dataclass(frozen=True)
class AuthRefusal(Exception):
    """An authorization failure as RFC 6750 §3.1 words it: status, error code (None when no credentials
    were given), a description, and the scopes to ask for."""

    status: int
    error: str | None
    description: str
    scope: tuple[str, ...] = ()
    scheme: str = "Bearer"  # the challenge the error belongs to (RFC 9449 §7.1: DPoP for proof errors)


def metadata_paths(resource: str) -> tuple[str, ...]:
    """The paths serving the metadata: the path-suffixed well-known URI (RFC 9728 §3.1), then the root one
    that MCP clients fall back to (basic/authorization "Protected Resource Metadata Discovery")."""
    path = urlsplit(resource).path.rstrip("/")
    return (WELL_KNOWN + path, WELL_KNOWN) if path else (WELL_KNOWN,)


def metadata_url(resource: str) -> str:
    """The metadata URL named in challenges: the well-known path inserted before the resource's path."""
    parts = urlsplit(resource)
    return urlunsplit((parts.scheme, parts.netloc, metadata_paths(resource)[0], "", ""))


def metadata_document(
    resource: str,
    authorization_servers: Sequence[str],
    scopes_supported: Sequence[str] | None = None,
    resource_name: str | None = None,
) -> dict[str, Any]:
    """The Protected Resource Metadata (RFC 9728 §2); MCP requires at least one authorization server."""
    if not authorization_servers:
        raise ValueError("authorization_servers must name at least one authorization server")
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    if scopes_supported:
        document["scopes_supported"] = list(scopes_supported)
    if resource_name:
        document["resource_name"] = resource_name
    return document


def challenge(
    resource_metadata: str | None,
    scope: Iterable[str] = (),
    error: str | None = None,
    description: str = "",
    realm: str | None = None,
) -> str:
    """The WWW-Authenticate value: `Bearer resource_metadata="…", scope="…"` plus the error, if any; a
    resource naming no authorization server (API keys only) has no metadata, and names its `realm`."""
    params = [("resource_metadata", resource_metadata)] if resource_metadata else []
    if realm:
        params.append(("realm", realm))
    scopes = " ".join(scope)
    if scopes:
        params.append(("scope", scopes))
    if error:
        params.append(("error", error))
        if description:
            params.append(("error_description", description))
    return www_authenticate("Bearer", params)


def www_authenticate(scheme: str, params: Iterable[tuple[str, str]]) -> str:
    """A challenge, `scheme name="value", ...` (RFC 9110 §11.6.1), for Bearer (RFC 6750 §3) and DPoP
    (RFC 9449 §7.1) alike: each value a quoted-string of the characters RFC 6750 §3 allows, others
    replaced by "?". A comma in the free-text error_description becomes ";": the DPoP challenge goes
    beside the Bearer one, and a reader splitting the header at commas must not cut a value in two."""
    quoted = []
    for name, value in params:
        text = value.replace(",", ";") if name == "error_description" else value
        quoted.append(f'{name}="{_UNSAFE.sub("?", text)}"')
    return f"{scheme} {', '.join(quoted)}" if quoted else scheme


def bearer_token(values: Sequence[str], max_length: int) -> str | None:
    """The access token of the Authorization header values; None when no Bearer credentials were sent.

    More than one Authorization header, or a malformed Bearer value, is a 400 "invalid_request";
    a token longer than `max_length` is a 401 "invalid_token".
    """
    found = credentials(values, max_length, ("bearer",))
    return found[1] if found else None


def credentials(
    values: Sequence[str], max_length: int, schemes: Sequence[str] = ("bearer", "dpop")
) -> tuple[str, str] | None:
    """The scheme (lower case, one of `schemes`) and access token of the Authorization header values;
    None when no credentials of those schemes were sent. Errors as for `bearer_token`."""
    if len(values) > 1:
        raise AuthRefusal(400, "invalid_request", "more than one Authorization header")
    if not values:
        return None
    name, _, token = values[0].strip().partition(" ")
    scheme = name.lower()
    if scheme not in schemes:
        return None
    token = token.strip()
    if len(token) > max_length:
        raise AuthRefusal(401, "invalid_token", f"the token is longer than {max_length} characters")
    if not _B64TOKEN.fullmatch(token):
        raise AuthRefusal(400, "invalid_request", f"malformed {name} credentials")
    return scheme, token


def query_carries_token(query_string: bytes) -> bool:
    """Whether the URI query has an `access_token` (basic/authorization: tokens MUST NOT be in it)."""
    if b"access_token" not in query_string:
        return False
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    return any(name == "access_token" for name, _ in pairs)


def missing_scopes(granted: Iterable[str], required: Iterable[str]) -> tuple[str, ...]:
    """The required scopes the token was not granted, in the order they are required."""
    have = set(granted)
    return tuple(s for s in required if s not in have)


def scope_challenge(
    required: Sequence[str], granted: Iterable[str], supported: Sequence[str] | None
) -> tuple[str, ...]:
    """The scopes a 403 asks for: the required ones plus the granted ones this resource knows, so a
    client stepping up keeps what it has (basic/authorization "Runtime Insufficient Scope Errors")."""
    known = set(supported or ())
    kept = sorted(s for s in granted if s in known and s not in required)
    return (*required, *kept)


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URIs name the same resource: scheme and host case, a default port and a
    trailing slash do not matter; anything else in the URI does."""
    return _canonical(a) == _canonical(b)


def _canonical(uri: str) -> tuple[str, str, int | None, str, str]:
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        port = -1
    scheme = parts.scheme.lower()
    port = None if port == _DEFAULT_PORTS.get(scheme) else port
    return scheme, (parts.hostname or "").lower(), port, parts.path.rstrip("/"), parts.query


def audiences_of(claims: Mapping[str, Any]) -> tuple[str, ...]:
    """The `aud` claim as a tuple (a string or an array of strings, RFC 7519 §4.1.3; RFC 7662 §2.2)."""
    aud = claims.get("aud")
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list) and all(isinstance(a, str) for a in aud):
        return tuple(aud)
    if aud is None:
        return ()
    raise InvalidToken("the aud claim is neither a string nor an array of strings")


def check_times(claims: Mapping[str, Any], now: float, leeway: float) -> None:
    """Refuse a token past `exp` or before `nbf`, allowing `leeway` seconds of clock skew."""
    exp, nbf = claims.get("exp"), claims.get("nbf")
    for name, value in (("exp", exp), ("nbf", nbf)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise InvalidToken(f"the {name} claim is not a number")
    if exp is not None and now > exp + leeway:
        raise InvalidToken("the token has expired")
    if nbf is not None and now + leeway < nbf:
        raise InvalidToken("the token is not valid yet")


def token_from_claims(claims: Mapping[str, Any]) -> AccessToken:
    """An AccessToken from JWT (RFC 9068 §2.2) or introspection (RFC 7662 §2.2) claims."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        scopes = frozenset(scope.split())
    elif isinstance(claims.get("scp"), list):  # the array form some servers use
        scopes = frozenset(str(s) for s in claims["scp"])
    elif scope is None:
        scopes = frozenset()
    else:
        raise InvalidToken("the scope claim is not a string")
    client = claims.get("client_id", claims.get("azp"))
    sub, exp = claims.get("sub"), claims.get("exp")
    return AccessToken(
        subject=sub if isinstance(sub, str) else None,
        client_id=client if isinstance(client, str) else None,
        scopes=scopes,
        expires_at=float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None,
        audience=audiences_of(claims),
        claims=dict(claims),
    )
