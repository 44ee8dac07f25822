"""What a protected MCP server needs from token verification; the bounded fetch the verifiers share."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import httpx
import orjson

from ..protocol.resource_auth import AccessToken, InvalidToken

__all__ = ["AnyVerifier", "TokenVerifier", "VerifierUnavailable", "fetch_json"]


@runtime_checkable
class TokenVerifier(Protocol):
    """Verifies an access token presented to this resource server."""

    async def verify(self, token: str) -> AccessToken:
        """The token's AccessToken; raises InvalidToken when it is not acceptable here, or
        VerifierUnavailable when it cannot be checked now (the authorization server is unreachable)."""
        ...


class VerifierUnavailable(Exception):
    """The token could not be checked: keys or introspection are out of reach. Not the token's fault."""


class AnyVerifier:
    """Accepts a token any of `verifiers` accepts, asking them in order (put the cheap, local ones first:
    API keys before introspection). Refused by all: InvalidToken with each one's reason; refused by
    some and unchecked by another: VerifierUnavailable, as that one might have accepted it."""

    def __init__(self, *verifiers: TokenVerifier) -> None:
        if not verifiers:
            raise ValueError("AnyVerifier needs at least one verifier")
        self.verifiers = verifiers

    async def verify(self, token: str) -> AccessToken:
        reasons: list[str] = []
        unavailable: VerifierUnavailable | None = None
        for verifier in self.verifiers:
            try:
                return await verifier.verify(token)
            except InvalidToken as exc:
                reasons.append(exc.description)
            except VerifierUnavailable as exc:
                unavailable = exc
        if unavailable is not None:
            raise unavailable
        raise InvalidToken("; ".join(dict.fromkeys(reasons)))


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
