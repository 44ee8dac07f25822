"""Who may ask mcpkit's authorization server for tokens: clients registered dynamically (RFC 7591) and
clients named by a Client ID Metadata Document URL (MCP basic/authorization "Client ID Metadata Documents").
Pure rules over the metadata; fetching and storing are the driver's. No I/O.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from .oauth_server import OAuthError

__all__ = [
    "AUTH_METHODS",
    "ClientInfo",
    "client_from_document",
    "client_from_registration",
    "fetch_address_problem",
    "is_document_client_id",
    "redirect_uri_problem",
]

AUTH_METHODS: Final = ("none", "client_secret_basic", "client_secret_post")
_GRANTS: Final = frozenset({"authorization_code", "refresh_token"})
_LOOPBACK: Final = ("localhost", "127.0.0.1", "::1")
_SCHEME: Final = re.compile(r"[a-z][a-z0-9+.\-]*")
_UNSAFE_CHARS: Final = re.compile(r"[\x00-\x20\x7f]")
_MAX_TEXT: Final = 200
_MAX_URIS: Final = 10


@dataclass(frozen=True)
class ClientInfo:
    """A client as the server knows it: its redirect URIs (compared exactly), how it authenticates at the
    token endpoint, and what the consent page shows (its name, and where its metadata came from)."""

    client_id: str
    redirect_uris: tuple[str, ...]
    auth_method: str = "none"
    client_name: str | None = None
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    from_document: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "redirect_uris": list(self.redirect_uris),
            "token_endpoint_auth_method": self.auth_method,
            "client_name": self.client_name,
            "grant_types": list(self.grant_types),
            "from_document": self.from_document,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClientInfo:
        return cls(
            client_id=data["client_id"],
            redirect_uris=tuple(data["redirect_uris"]),
            auth_method=data["token_endpoint_auth_method"],
            client_name=data.get("client_name"),
            grant_types=tuple(data["grant_types"]),
            from_document=bool(data.get("from_document")),
        )


def redirect_uri_problem(uri: str) -> str | None:
    """Why `uri` cannot be a redirect URI, or None: absolute, no fragment (OAuth 2.1 §2.3), https, http
    only to a loopback address (RFC 8252 §7.3), or a private-use scheme
    with a dot in it (RFC 8252 §7.1), so javascript:, data: and the like are refused."""
    parts = urlsplit(uri)
    if not _SCHEME.fullmatch(parts.scheme) or "#" in uri:
        return "a redirect URI must be absolute and carry no fragment"
    if _UNSAFE_CHARS.search(uri):
        return "a redirect URI may not hold spaces or control characters"
    if parts.scheme == "https":
        return None if parts.hostname else "an https redirect URI needs a host"
    if parts.scheme == "http":
        if (parts.hostname or "") in _LOOPBACK or _is_loopback_ip(parts.hostname or ""):
            return None
        return "http redirect URIs are accepted only on loopback addresses"
    if "." not in parts.scheme:
        return f"the scheme {parts.scheme!r} is not a private-use (reverse domain name) scheme"
    return None


def _internal_host(host: str) -> bool:
    """A host named by an address the server should not fetch from for a stranger (or localhost)."""
    if host.lower() in _LOOPBACK:
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return fetch_address_problem(host) is not None


def fetch_address_problem(address: str) -> str | None:
    """Why the server may not fetch from `address` (an IP address, as a resolver gives it) for a stranger,
    or None: a private, loopback, link-local, reserved, multicast, unspecified or otherwise not global
    address is its own network's (server-side request forgery), as is one an IPv4-mapped, 6to4 or Teredo
    IPv6 address carries."""
    try:
        found = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    for ip in _carried(found):
        kinds = [kind for kind, flag in _kinds(ip) if flag]
        if kinds or not ip.is_global:
            return f"{address} is not a public address ({kinds[0] if kinds else 'not global'})"
    return None


def _carried(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """`ip`, and the IPv4 address an IPv6 one carries (its traffic reaches that one)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return [ip]
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    inner = [ip.sixtofour, ip.teredo[1] if ip.teredo else None]
    return [ip, *(v4 for v4 in inner if v4 is not None)]


def _kinds(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[tuple[str, bool]]:
    return [
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    ]


def _is_loopback_ip(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client_from_registration(metadata: Mapping[str, Any], client_id: str) -> ClientInfo:
    """The client a registration request describes (RFC 7591 §2), under the new `client_id`.

    Raises OAuthError "invalid_redirect_uri" or "invalid_client_metadata" (RFC 7591 §3.2.2)."""
    uris = _redirect_uris(metadata.get("redirect_uris"))
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise OAuthError(
            "invalid_client_metadata", f"token_endpoint_auth_method must be one of {AUTH_METHODS}"
        )
    grants = metadata.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not grants or not set(grants) <= _GRANTS:
        raise OAuthError(
            "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token"
        )
    responses = metadata.get("response_types", ["code"])
    if responses != ["code"]:
        raise OAuthError("invalid_client_metadata", 'response_types must be ["code"]')
    return ClientInfo(client_id, uris, method, _name(metadata), tuple(grants))


def is_document_client_id(client_id: str, allow_http: bool = False) -> bool:
    """Whether `client_id` names a Client ID Metadata Document: an https URL (http only when
    `allow_http`, for tests) with a path, no fragment, no credentials and no dot segments, whose host is
    not a loopback or private address (unless `allow_http`): the server fetches it."""
    parts = urlsplit(client_id)
    if parts.scheme != "https" and not (allow_http and parts.scheme == "http"):
        return False
    if not allow_http and _internal_host(parts.hostname or ""):
        return False
    segments = parts.path.split("/")
    return bool(
        parts.hostname
        and parts.path not in ("", "/")
        and not parts.fragment
        and parts.username is None
        and parts.password is None
        and "." not in segments
        and ".." not in segments
    )


def client_from_document(client_id: str, document: Mapping[str, Any]) -> ClientInfo:
    """The client a fetched metadata document describes: its `client_id` must be the URL it was fetched
    from, and it may not claim a shared secret (the document is public)."""
    if document.get("client_id") != client_id:
        raise OAuthError("invalid_client", "the metadata document names another client_id")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise OAuthError("invalid_client", "a metadata document client authenticates with none only")
    uris = _redirect_uris(document.get("redirect_uris"), "invalid_client")
    grants = document.get("grant_types", ["authorization_code", "refresh_token"])
    if not isinstance(grants, list) or not set(grants) <= _GRANTS:
        raise OAuthError("invalid_client", "the metadata document asks for unsupported grant types")
    return ClientInfo(client_id, uris, "none", _name(document), tuple(grants), from_document=True)


def _redirect_uris(value: Any, error: str = "invalid_redirect_uri") -> tuple[str, ...]:
    if not isinstance(value, list) or not value or len(value) > _MAX_URIS:
        raise OAuthError(error, f"redirect_uris must list 1 to {_MAX_URIS} URIs")
    for uri in value:
        if not isinstance(uri, str) or len(uri) > 2000:
            raise OAuthError(error, "each redirect URI must be a string")
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise OAuthError(error, problem)
    return tuple(value)


def _name(metadata: Mapping[str, Any]) -> str | None:
    name = metadata.get("client_name")
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_TEXT:
        raise OAuthError("invalid_client_metadata", f"client_name must be 1 to {_MAX_TEXT} characters")
    return name.strip()
