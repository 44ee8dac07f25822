"""Many tenants in one process: an ASGI app that hands each request to its tenant's own app.

`Tenants(build, resolve=tenant_claim("tenant"))` reads the tenant of each request from its verified
access token (put there by `mcpkit.auth.protect`, which wraps this app) and serves it with that
tenant's StreamableHTTPApp, made on the tenant's first request around `build(tenant)`: a new Server
(its registry, list caches, peers, task engine and requestState key), in a new app (its sessions and
event store). Nothing is shared between tenants, so nothing can cross: a session id, a task id, a
cursor, a subscription or an event id of one tenant names nothing in another's app.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

import orjson

from .app import StreamableHTTPApp
from .asgi import AUTH_SCOPE_KEY, JSON_HEADERS, Receive, Scope, Send, respond

if TYPE_CHECKING:
    from ...protocol.resource_auth import AccessToken

__all__ = ["Resolve", "Tenants", "tenant_claim"]

log = logging.getLogger("mcpkit")

Resolve = Callable[["AccessToken | None", Scope], "str | None"]
# What only one tenant may hold: given once to Tenants, an instance would be shared by all of them.
_SHARED_PARTS: Final = ("event_store", "backplane", "operations")


@runtime_checkable
class Closable(Protocol):
    """A tenant's app that ends its sessions when asked (a StreamableHTTPApp does)."""

    async def aclose(self) -> None: ...


def tenant_claim(claim: str = "tenant") -> Resolve:
    """A resolver reading the tenant from the access token's `claim` (a JWT's claim, an API key's
    claims); a request without a token, or whose token lacks it, has no tenant."""

    def resolve(auth: AccessToken | None, _scope: Scope) -> str | None:
        value = auth.claims.get(claim) if auth is not None else None
        return value if isinstance(value, str) and value else None

    return resolve


class Tenants:
    """An ASGI app serving each tenant with its own app (see the module docstring).

    `build(tenant)`: the target of that tenant's app (a new Server each call), or None when there is
    no such tenant. `resolve(auth, scope)`: the request's tenant, or None. A request with no tenant,
    or one `build` refuses, is answered 403, the same for both, so it does not tell which tenants
    exist. `app(target)`: the tenant's ASGI app (default `StreamableHTTPApp(target, **app_options)`);
    parts that must not be shared (`event_store`, `backplane`, `operations`) go there, made per call.
    `max_tenants`: apps kept at most; a new tenant past it is answered 503.
    """

    def __init__(
        self,
        build: Callable[[str], Any],
        *,
        resolve: Resolve | None = None,
        app: Callable[[Any], Any] | None = None,
        max_tenants: int = 1000,
        **app_options: Any,
    ) -> None:
        shared = sorted(set(app_options) & set(_SHARED_PARTS))
        if shared:
            raise TypeError(f"Tenants: {', '.join(shared)} would be shared by every tenant; make it in app=")
        self.build = build
        self.resolve = resolve if resolve is not None else tenant_claim()
        self._make_app = app if app is not None else (lambda target: StreamableHTTPApp(target, **app_options))
        self.max_tenants = max_tenants
        self.apps: dict[str, Any] = {}  # by tenant
        self._targets: dict[int, str] = {}  # whose target each is, by identity

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        tenant = self.resolve(scope.get(AUTH_SCOPE_KEY), scope)
        app = self.apps.get(tenant) if tenant is not None else None
        if app is None and tenant is not None:
            if len(self.apps) >= self.max_tenants:
                log.warning("Tenants: %d tenants served, a new one is refused", len(self.apps))
                await _refuse(send, 503, "temporarily_unavailable", "too many tenants")
                return
            try:
                app = self._open(tenant)
            except _Shared as shared:
                log.error("%s", shared)
                await _refuse(send, 500, "server_error", "this tenant cannot be served")
                return
        if app is None:
            await _refuse(send, 403, "access_denied", "this token is not for a tenant served here")
            return
        await app(scope, receive, send)

    def _open(self, tenant: str) -> Any:
        """The app of `tenant`, made now (no await between the look-up and this: one per tenant)."""
        target = self.build(tenant)
        if target is None:
            return None
        other = self._targets.get(id(target))
        if other is not None:
            raise _Shared(f"Tenants: build({tenant!r}) returned the server of tenant {other!r}")
        app = self._make_app(target)
        self.apps[tenant] = app
        self._targets[id(target)] = tenant
        return app

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Startup is at once (each tenant's app hosts its own sessions); shutdown ends every tenant's."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def aclose(self) -> None:
        """End every tenant's sessions."""
        apps, self.apps = list(self.apps.values()), {}
        self._targets.clear()
        for app in apps:
            if isinstance(app, Closable):
                await app.aclose()


class _Shared(Exception):
    """`build` handed a tenant a server another tenant has: served, it would mix their items."""


async def _refuse(send: Send, status: int, error: str, description: str) -> None:
    body = orjson.dumps({"error": error, "error_description": description})
    await respond(send, status, body, list(JSON_HEADERS))
