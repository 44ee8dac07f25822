"""What a protected MCP server needs from token verification; the bounded fetch the verifiers share."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import httpx
import orjson

from ..protocol.resource_auth import AccessToken

__all__ = ["TokenVerifier", "VerifierUnavailable", "fetch_json"]


@runtime_checkable
class TokenVerifier(Protocol):
    """Verifies an access token presented to this resource server."""

    async def verify(self, token: str) -> AccessToken:
        """The token's AccessToken; raises InvalidToken when it is not acceptable here, or
        VerifierUnavailable when it cannot be checked now (the authorization server is unreachable)."""
        ...


class VerifierUnavailable(Exception):
    """The token could not be checked: keys or introspection are out of reach. Not the token's fault."""


async def fetch_json(
    client: httpx.AsyncClient, method: str, url: str, max_bytes: int, **request: Any
) -> tuple[int, dict[str, Any] | None]:
    """The status and JSON object of a response read up to `max_bytes` (None if not a JSON object).

    Transport failures and oversized bodies raise VerifierUnavailable.
    """
    try:
        async with client.stream(method, url, **request) as response:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise VerifierUnavailable(f"{url} answered more than {max_bytes} bytes")
    except httpx.HTTPError as exc:
        raise VerifierUnavailable(f"{url} is unreachable: {type(exc).__name__}") from exc
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return response.status_code, None
    return response.status_code, document if isinstance(document, dict) else None
