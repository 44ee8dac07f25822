"""Which URLs the OAuth client may open in a browser, send credentials to, or fetch (pure functions).

Each function returns None for an acceptable URL, else the reason it is refused. Authorization "Communication
Security": authorization server endpoints MUST be served over HTTPS; plain http is allowed only on loopback,
where local development and tests live (as RFC 8252 §7.3 allows for native-app redirects). A URL taken from
a server's answer (a challenge's resource_metadata, an authorization server named by resource metadata) must
not point the client at the internal network (server-side request forgery), unless the user allows it.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Link-local (cloud metadata at 169.254.169.254), private, shared and unique-local ranges, and "this
# network": reachable from the client's host but not meant for anything a remote server names.
_INTERNAL = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "::/128",
        "fc00::/7",
        "fe80::/10",
    )
)


def ip_of(host: str) -> IPAddress | None:
    """The address `host` spells literally (an IPv4-mapped IPv6 address as its IPv4 one), else None."""
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback_host(host: str) -> bool:
    """localhost (and names under it, RFC 6761 §6.3), 127.0.0.0/8 or ::1."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = ip_of(host)
    return address is not None and address.is_loopback


def secure_url_problem(url: str) -> str | None:
    """Why `url` may not be opened in a browser or receive credentials: it must be https, or http on a
    loopback host; any other scheme (javascript:, file:, data:, ...) is refused."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if scheme == "https" and host:
        return None
    if scheme == "http" and host and is_loopback_host(host):
        return None
    return f"{url[:200]!r} is neither https nor http on a loopback host"


def address_problem(address: IPAddress, *, allow_private_networks: bool = False) -> str | None:
    """Why a request to `address` is refused: unspecified, link-local, private or unique-local
    (loopback stays allowed); nothing is refused when `allow_private_networks`."""
    if allow_private_networks or address.is_loopback:
        return None
    if address.is_unspecified or any(address in net for net in _INTERNAL):
        return f"{address} is an internal network address"
    return None


def fetch_url_problem(
    url: str, *, trusted_origin: str | None = None, allow_private_networks: bool = False
) -> str | None:
    """Why the client may not fetch `url` that a server named: not http(s), or a literal internal address
    (`trusted_origin`, the MCP server the user chose, is exempt). Host names are checked once resolved."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return f"{url[:200]!r} is not an http(s) URL"
    if trusted_origin is not None and _origin(url) == _origin(trusted_origin):
        return None
    address = ip_of(parts.hostname)
    if address is None:
        return None
    return address_problem(address, allow_private_networks=allow_private_networks)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port
