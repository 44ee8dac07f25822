"""Where metadata lives: the well-known URLs the client tries, in the spec's order (pure functions)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def resource_metadata_urls(server_url: str) -> list[str]:
    """RFC 9728 §3.1 well-known URIs: path-inserted first, then the root (authorization "Protected
    Resource Metadata Discovery")."""
    base, path = origin(server_url), _path(server_url)
    root = f"{base}/.well-known/oauth-protected-resource"
    return [f"{root}{path}", root] if path else [root]


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 §3.1 and OpenID Connect Discovery URLs in the order of "Authorization Server Metadata
    Discovery": OAuth with path insertion, OpenID with path insertion, OpenID with path appending."""
    base, path = origin(issuer), _path(issuer)
    if not path:
        return [f"{base}/.well-known/oauth-authorization-server", f"{base}/.well-known/openid-configuration"]
    return [
        f"{base}/.well-known/oauth-authorization-server{path}",
        f"{base}/.well-known/openid-configuration{path}",
        f"{base}{path}/.well-known/openid-configuration",
    ]


def canonical_resource(server_url: str) -> str:
    """The MCP server's canonical URI for RFC 8707 `resource`: lowercase scheme and host, no fragment."""
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether a protected resource identifier names this server: same origin, and its path is the
    server's path or a parent of it (RFC 9728 §3.3 asks the client to check the match)."""
    res, srv = urlsplit(canonical_resource(resource)), urlsplit(canonical_resource(server_url))
    if (res.scheme, res.netloc) != (srv.scheme, srv.netloc):
        return False
    res_path, srv_path = res.path.rstrip("/"), srv.path.rstrip("/")
    return srv_path == res_path or srv_path.startswith(res_path + "/")
