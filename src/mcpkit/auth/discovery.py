"""An authorization server's metadata, found from its issuer (RFC 8414 §3, OpenID Connect Discovery §4)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from .verifier import VerifierUnavailable, fetch_json

__all__ = ["server_metadata"]


def metadata_urls(issuer: str) -> list[str]:
    """Where the metadata may be, in the order MCP clients try them (basic/authorization
    "Authorization Server Metadata Discovery")."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    names = ("oauth-authorization-server", "openid-configuration")
    urls = [at(f"/.well-known/{name}{path}") for name in names]
    if path:
        urls.append(at(path + "/.well-known/openid-configuration"))
    return urls


async def server_metadata(client: httpx.AsyncClient, issuer: str, max_bytes: int) -> dict[str, Any]:
    """The first metadata document found whose `issuer` is `issuer` (RFC 8414 §3.3 requires they match)."""
    for url in metadata_urls(issuer):
        status, document = await fetch_json(client, "GET", url, max_bytes)
        if status == 200 and document is not None:
            if document.get("issuer") != issuer:
                raise VerifierUnavailable(f"the metadata at {url} names issuer {document.get('issuer')!r}")
            return document
    raise VerifierUnavailable(f"no authorization server metadata found for {issuer}")
