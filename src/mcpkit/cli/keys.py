"""`mcpkit serve FILE --http --api-keys PATH`: the MCP endpoint behind the API keys of a key file
(mcpkit.auth.api_keys: `key subject scope...` lines, keys plain or `sha256:<hex>`), the tokens of the
`--login-*` authorization server (cli.login), or either. The probes and metrics stay open, as an
orchestrator asks them without a key."""

from __future__ import annotations

from typing import Any

from .errors import UsageError

__all__ = ["check_api_keys", "guarded"]


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


def guarded(app: Any, api_keys: tuple[str, str] | None, login: Any = None) -> Any:
    """`app` with its MCP endpoint (`app.path`) behind the keys of `api_keys` (a key file and the resource
    its keys are for), the tokens of `login` (an AuthorizationServer, whose endpoints are served beside
    it), or either of them; `app` itself without both."""
    from ..auth import AnyVerifier, APIKeyVerifier, ProtectedResource

    if login is None:
        if api_keys is None:
            return app
        keys = APIKeyVerifier.from_file(api_keys[0], audience=api_keys[1])
        return _route(app, ProtectedResource(app, verifier=keys, resource=api_keys[1], dpop="disabled"))
    verifier = login.verifier
    if api_keys is not None:  # keys first: they are checked locally
        verifier = AnyVerifier(APIKeyVerifier.from_file(api_keys[0], audience=api_keys[1]), verifier)
    guard = ProtectedResource(
        app,
        verifier=verifier,
        resource=login.resource,
        authorization_servers=[login.issuer],
        scopes_supported=login.scopes,
    )
    return _route(app, guard, login)


def _route(app: Any, guard: Any, login: Any = None) -> Any:
    from ..transports.http_server.asgi import endpoint_path

    endpoint = app.path

    async def route(scope: Any, receive: Any, send: Any) -> None:
        # lifespan and the probes go to the app itself; only the MCP endpoint needs a key or a token
        if scope["type"] == "http":
            path = scope.get("path", "")
            if login is not None and login.handles(path):
                await login(scope, receive, send)
                return
            if endpoint_path(scope) == endpoint or path in guard.metadata_paths:
                await guard(scope, receive, send)
                return
        await app(scope, receive, send)

    return route
