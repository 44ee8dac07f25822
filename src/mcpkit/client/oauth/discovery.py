"""Finding the authorization server: protected resource metadata (RFC 9728), then its metadata (RFC 8414,
OpenID Connect Discovery), or the 2025-03-26 fallbacks when the server publishes no resource metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import httpx

from ...protocol.jsonrpc import JSON
from .challenge import Challenge
from .errors import OAuthError
from .url_safety import address_problem, fetch_url_problem, ip_of
from .urls import authorization_server_metadata_urls, origin, resource_covers, resource_metadata_urls


@dataclass(frozen=True)
class ResourceMetadata:
    """The fields of RFC 9728 §2 the client uses."""

    resource: str | None
    authorization_servers: list[str]
    scopes_supported: list[str] | None = None


@dataclass(frozen=True)
class ServerMetadata:
    """An authorization server's endpoints and what it supports (RFC 8414 §2)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    raw: JSON = field(default_factory=dict)

    def supports(self, key: str, value: str) -> bool:
        listed = self.raw.get(key)
        return isinstance(listed, list) and value in listed

    def listed(self, key: str) -> list[str] | None:
        value = self.raw.get(key)
        return [str(v) for v in value] if isinstance(value, list) else None

    @property
    def cimd_supported(self) -> bool:
        return self.raw.get("client_id_metadata_document_supported") is True

    @property
    def pkce_s256(self) -> bool:
        return self.supports("code_challenge_methods_supported", "S256")

    @property
    def iss_parameter_supported(self) -> bool:
        return self.raw.get("authorization_response_iss_parameter_supported") is True


async def require_fetchable(url: str, *, trusted_origin: str, allow_private_networks: bool = False) -> None:
    """Raise OAuthError "unsafe_url" unless the client may fetch `url`, a URL a server named (see
    url_safety.fetch_url_problem); a host name is refused when an address it resolves to is."""
    problem = fetch_url_problem(
        url, trusted_origin=trusted_origin, allow_private_networks=allow_private_networks
    )
    host = urlsplit(url).hostname or ""
    literal, trusted = ip_of(host) is not None, origin(url) == origin(trusted_origin)
    if problem is None and not (allow_private_networks or literal or trusted):
        problem = await _resolved_problem(host)
    if problem is not None:
        raise OAuthError("unsafe_url", problem)


async def _resolved_problem(host: str) -> str | None:
    # A check before the fetch, not a pin: a name whose answer changes between the two (DNS
    # rebinding) is out of reach here.
    try:
        infos = await anyio.getaddrinfo(host, None)
    except OSError:
        return None  # unresolvable: the fetch itself fails
    for info in infos:
        address = ip_of(str(info[4][0]))
        problem = address_problem(address) if address is not None else None
        if problem is not None:
            return f"{host} resolves to {problem}"
    return None


async def _get_json(http: httpx.AsyncClient, url: str) -> JSON | None:
    try:
        response = await http.get(
            url, headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
        )
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


async def discover_resource(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge, *, allow_private_networks: bool = False
) -> ResourceMetadata | None:
    """The server's resource metadata: from the challenge's URL, else the well-known URIs; None if absent.

    Raises OAuthError when the metadata names another resource (RFC 9728 §3.3), or "unsafe_url" when the
    challenge points at an internal address (see require_fetchable).
    """
    urls = [challenge.resource_metadata] if challenge.resource_metadata else []
    for url in urls:
        await require_fetchable(url, trusted_origin=server_url, allow_private_networks=allow_private_networks)
    for url in urls + resource_metadata_urls(server_url):
        body = await _get_json(http, url)
        if body is None or not isinstance(body.get("authorization_servers"), list):
            continue
        resource = body.get("resource")
        if resource is not None and not resource_covers(str(resource), server_url):
            raise OAuthError("invalid_resource", f"resource metadata names {resource}, not {server_url}")
        scopes = body.get("scopes_supported")
        return ResourceMetadata(
            resource=str(resource) if resource is not None else None,
            authorization_servers=[str(s) for s in body["authorization_servers"]],
            scopes_supported=[str(s) for s in scopes] if isinstance(scopes, list) else None,
        )
    return None


def _server_metadata(body: JSON) -> ServerMetadata:
    try:
        return ServerMetadata(
            issuer=str(body["issuer"]),
            authorization_endpoint=str(body.get("authorization_endpoint") or ""),
            token_endpoint=str(body["token_endpoint"]),
            registration_endpoint=body.get("registration_endpoint"),
            raw=body,
        )
    except KeyError as missing:
        raise OAuthError("invalid_metadata", f"authorization server metadata lacks {missing}") from None


async def discover_server(http: httpx.AsyncClient, issuer: str) -> ServerMetadata:
    """The metadata of the authorization server `issuer`, whose `issuer` must be that same string
    (RFC 8414 §3.3)."""
    for url in authorization_server_metadata_urls(issuer):
        body = await _get_json(http, url)
        if body is None:
            continue
        metadata = _server_metadata(body)
        if metadata.issuer != issuer:
            raise OAuthError("invalid_metadata", f"metadata at {url} has issuer {metadata.issuer!r}")
        return metadata
    raise OAuthError("no_metadata", f"no authorization server metadata for {issuer}")


async def discover_legacy_server(http: httpx.AsyncClient, server_url: str) -> ServerMetadata:
    """2025-03-26 "Server Metadata Discovery": metadata at the server's root, else the default endpoints
    /authorize, /token and /register there."""
    base = origin(server_url)
    body = await _get_json(http, f"{base}/.well-known/oauth-authorization-server")
    if body is not None:
        return _server_metadata(body)
    return ServerMetadata(
        issuer=base,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
        raw={"legacy_defaults": True},
    )
