"""`mcpkit serve FILE --http --api-keys PATH`: the MCP endpoint behind the API keys of a key file
(mcpkit.auth.api_keys: `key subject scope...` lines, keys plain or `sha256:<hex>`). The probes and metrics
stay open, as an orchestrator asks them without a key."""

from __future__ import annotations

from typing import Any

from .errors import UsageError

__all__ = ["check_api_keys", "with_api_keys"]


def check_api_keys(path: str) -> None:
    """UsageError (one line, naming the line of the file, never a key) unless `path` is a key file
    with at least one key: checked once here, before any worker starts."""
    from ..auth.api_keys import parse_api_keys

    try:
        with open(path, encoding="utf-8") as keys:
            entries = parse_api_keys(keys.read(), path)
    except OSError as exc:
        raise UsageError(f"--api-keys {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"--api-keys: {exc}") from None
    if not entries:
        raise UsageError(f"--api-keys {path}: no keys in the file (lines of 'key subject scope...')")


def with_api_keys(app: Any, path: str, resource: str) -> Any:
    """`app` with its MCP endpoint (`app.path`) behind the keys of `path`, issued for `resource`."""
    from ..auth import APIKeyVerifier, protect
    from ..transports.http_server.asgi import endpoint_path

    verifier = APIKeyVerifier.from_file(path, audience=resource)
    guarded = protect(app, verifier=verifier, resource=resource, dpop="disabled")
    endpoint = app.path

    async def route(scope: Any, receive: Any, send: Any) -> None:
        # lifespan and the probes go to the app itself; only the MCP endpoint needs a key
        if scope["type"] == "http" and endpoint_path(scope) == endpoint:
            await guarded(scope, receive, send)
        else:
            await app(scope, receive, send)

    return route
