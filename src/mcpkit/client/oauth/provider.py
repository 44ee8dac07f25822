"""OAuthClient: an httpx.Auth that authorizes MCP requests as the spec's Authorization page describes.

A request goes out with the stored access token; a 401 starts discovery and authorization (or a
refresh), a 403 with error="insufficient_scope" a step-up authorization, each retried a bounded number
of times. Tokens and client identities are kept per authorization server issuer.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, replace

import anyio
import httpx

from .authorize import UserAgent, authorization_code_grant
from .challenge import Challenge, parse_challenge
from .discovery import (
    ResourceMetadata,
    ServerMetadata,
    discover_legacy_server,
    discover_resource,
    discover_server,
    require_fetchable,
)
from .dpop import DPoP, is_bound, is_nonce_challenge, present
from .errors import OAuthError
from .registration import ClientMetadata, metadata_document_client, register
from .store import ClientCredentials, InMemoryTokenStore, Tokens, TokenStore
from .token import request_token
from .urls import canonical_resource

JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# Gives the assertion for a JWT bearer grant (RFC 7523 §2.1) at `metadata`'s server for `resource`.
AssertionSource = Callable[[ServerMetadata, str], Awaitable[str]]


@dataclass(frozen=True)
class _Target:
    """Where and for what the client authorizes: one discovery's outcome."""

    metadata: ServerMetadata
    resource: str
    scopes_supported: list[str] | None
    dpop_offered: bool = False  # the resource's challenge offered DPoP (RFC 9449 §7.1)


class OAuthClient(httpx.Auth):
    """Authorization for one MCP server URL; pass it as `connect_http(url, auth=...)`.

    grant: "authorization_code" (needs `user_agent`), "client_credentials", or "jwt_bearer" (needs
    `assertion`). client: pre-registered credentials, used only at `client_issuer` (or, when that is
    not given, the first issuer they are used at); any other server is an OAuthError "issuer_mismatch".
    client_metadata_url: this client's metadata document URL, used where the server supports it.
    dpop: True asks for DPoP-bound tokens (RFC 9449) when the MCP server's challenge offers DPoP and
    its authorization server lists ES256 for it, with a key pair made for this client; False never;
    a DPoP(...) for a given key, limits, or required=True (proofs to any server, offered or not).
    allow_private_networks: fetch metadata and endpoints a server names on private, link-local and
    unique-local addresses too (off by default: server-side request forgery; loopback is always allowed).
    """

    def __init__(
        self,
        server_url: str,
        *,
        grant: str = "authorization_code",
        user_agent: UserAgent | None = None,
        assertion: AssertionSource | None = None,
        client: ClientCredentials | None = None,
        client_issuer: str | None = None,
        client_metadata: ClientMetadata | None = None,
        client_metadata_url: str | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
        max_step_ups: int = 2,
        timeout: float = 30.0,
        dpop: DPoP | bool = True,
        allow_private_networks: bool = False,
    ) -> None:
        self.server_url = server_url
        self.grant = grant
        self.user_agent = user_agent
        self.assertion = assertion
        self.client = client
        self.client_issuer = client_issuer
        self.client_metadata = client_metadata or ClientMetadata()
        self.client_metadata_url = client_metadata_url
        self.scope = scope
        self.store: TokenStore = store or InMemoryTokenStore()
        self.max_step_ups = max_step_ups
        self.timeout = timeout
        self.dpop: DPoP | None = DPoP() if dpop is True else dpop or None
        self.allow_private_networks = allow_private_networks
        self.issuer: str | None = None
        self._target: _Target | None = None
        self._lock = anyio.Lock()

    def authorizing(self) -> bool:
        """Whether tokens are being obtained now (a login, a refresh): a request waits on that."""
        return self._lock.locked()

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        sent = await self._usable_tokens()
        present(request, sent, self.dpop)
        response = yield request
        step_ups, reauthorized, nonce_retried_for = 0, False, None
        while True:
            fresh_nonce = self.dpop is not None and self.dpop.remember_nonce(str(request.url), response)
            if is_nonce_challenge(response) and is_bound(sent):
                if not fresh_nonce or nonce_retried_for is sent:
                    return  # RFC 9449 §9: one retry with the nonce given; the token itself is fine
                nonce_retried_for = sent
                await response.aread()
                present(request, sent, self.dpop)
                response = yield request
                continue
            challenge = parse_challenge(response.headers.get("WWW-Authenticate"))
            if response.status_code == 401 and not reauthorized:
                reauthorized = True
            elif (
                response.status_code == 403 and challenge.insufficient_scope and step_ups < self.max_step_ups
            ):
                step_ups += 1
            else:
                return
            await response.aread()
            async with self._lock:
                sent = await self._reauthorize(challenge, sent, step_up=response.status_code == 403)
            if sent is None:
                return
            present(request, sent, self.dpop)
            response = yield request

    # ---- tokens ---------------------------------------------------------------------------------

    async def _usable_tokens(self) -> Tokens | None:
        if self.issuer is None:
            return None
        tokens = await self.store.get_tokens(self.issuer)
        if tokens is None or not tokens.expired() or self._target is None:
            return tokens
        async with self._lock:  # one refresh for requests that found the token expired together
            tokens = await self.store.get_tokens(self._target.metadata.issuer)
            if tokens is not None and tokens.expired():
                tokens = await self._refresh(self._target, tokens)
        return tokens

    async def _refresh(self, target: _Target, tokens: Tokens) -> Tokens | None:
        client = await self.store.get_client(target.metadata.issuer)
        if not tokens.refresh_token or client is None:
            return None
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "resource": target.resource,
        }
        async with self._http() as http:
            try:
                fresh = await request_token(http, target.metadata, client, form, self._dpop_for(target))
            except OAuthError:
                await self.store.set_tokens(target.metadata.issuer, None)
                return None
        if fresh.refresh_token is None:  # OAuth 2.1 §4.3.3: the old refresh token may stay valid
            fresh = replace(fresh, refresh_token=tokens.refresh_token, scope=fresh.scope or tokens.scope)
        await self.store.set_tokens(target.metadata.issuer, fresh)
        return fresh

    async def _reauthorize(
        self, challenge: Challenge, sent: Tokens | None, *, step_up: bool
    ) -> Tokens | None:
        current = await self.store.get_tokens(self.issuer) if self.issuer else None
        if current is not None and current != sent and not step_up:
            return current  # another request authorized meanwhile
        if step_up and current is not None and _covers(current.scope, challenge.scope):
            return None  # the token already has every scope asked for: another round would not help
        async with self._http() as http:
            target = await self._discover(http, challenge)
            issuer = target.metadata.issuer
            if not step_up and current is not None and issuer == self.issuer:
                refreshed = await self._refresh(target, current)
                if refreshed is not None and refreshed != sent:
                    return refreshed
            scope = self._select_scope(target, challenge, current if step_up else None)
            tokens = await self._obtain(http, target, scope)
        await self.store.set_tokens(issuer, tokens)
        self.issuer, self._target = issuer, target
        return tokens

    # ---- discovery and grants ---------------------------------------------------------------------

    async def _discover(self, http: httpx.AsyncClient, challenge: Challenge) -> _Target:
        allow = self.allow_private_networks
        prm = await discover_resource(http, self.server_url, challenge, allow_private_networks=allow)
        if prm is None:  # a 2025-03-26 server: no resource metadata
            legacy = await discover_legacy_server(http, self.server_url)
            return _Target(legacy, canonical_resource(self.server_url), None, challenge.dpop_offered)
        if not prm.authorization_servers:
            raise OAuthError("no_authorization_server", "the resource metadata lists no authorization server")
        await self._require_fetchable(prm.authorization_servers[0])
        metadata = await discover_server(http, prm.authorization_servers[0])
        for endpoint in (metadata.token_endpoint, metadata.registration_endpoint):
            if endpoint:
                await self._require_fetchable(endpoint)
        resource = _resource(prm, self.server_url)
        return _Target(metadata, resource, prm.scopes_supported, challenge.dpop_offered)

    async def _require_fetchable(self, url: str) -> None:
        await require_fetchable(
            url, trusted_origin=self.server_url, allow_private_networks=self.allow_private_networks
        )

    def _select_scope(self, target: _Target, challenge: Challenge, current: Tokens | None) -> str | None:
        """ "Scope Selection Strategy": the challenge's scope, else the resource's scopes_supported,
        else none; a step-up keeps the scopes held; offline_access only where the server lists it."""
        if challenge.scope:
            scopes = challenge.scope.split()
        elif self.scope:
            scopes = self.scope.split()
        else:
            scopes = list(target.scopes_supported or [])
        if current is not None and current.scope:
            scopes = current.scope.split() + [s for s in scopes if s not in current.scope.split()]
        wants_offline = self.grant == "authorization_code" and self.client_metadata.wants_refresh_tokens
        offered = target.metadata.supports("scopes_supported", "offline_access")
        if wants_offline and offered and "offline_access" not in scopes:
            scopes.append("offline_access")
        if not offered:
            scopes = [s for s in scopes if s != "offline_access"]
        return " ".join(scopes) or None

    async def _client_for(
        self, http: httpx.AsyncClient, metadata: ServerMetadata, scope: str | None
    ) -> ClientCredentials:
        stored = await self.store.get_client(metadata.issuer)
        if stored is not None and (self.client is None or stored == self.client):
            return stored  # credentials given now win over those kept from before
        if self.client is not None:
            # "Authorization Server Binding": pre-registered credentials belong to one issuer (the
            # first they are used at, unless given); another server gets an error, not the secret.
            self.client_issuer = self.client_issuer or metadata.issuer
            if self.client_issuer != metadata.issuer:
                raise OAuthError(
                    "issuer_mismatch",
                    f"pre-registered credentials are for {self.client_issuer}, not {metadata.issuer}",
                )
            client = self.client
        elif self.client_metadata_url and metadata.cimd_supported:
            client = metadata_document_client(self.client_metadata_url)
        else:
            client = await register(http, metadata, self.client_metadata, scope)
        await self.store.set_client(metadata.issuer, client)
        return client

    async def _obtain(self, http: httpx.AsyncClient, target: _Target, scope: str | None) -> Tokens:
        client = await self._client_for(http, target.metadata, scope)
        base = {"resource": target.resource, **({"scope": scope} if scope else {})}
        if self.grant == "client_credentials":
            form = {"grant_type": "client_credentials", **base}
            return await request_token(http, target.metadata, client, form, self._dpop_for(target))
        if self.grant == "jwt_bearer":
            if self.assertion is None:
                raise OAuthError("no_assertion", "a jwt_bearer grant needs an assertion source")
            assertion = await self.assertion(target.metadata, target.resource)
            form = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion, **base}
            return await request_token(http, target.metadata, client, form, self._dpop_for(target))
        if self.user_agent is None:
            raise OAuthError("no_user_agent", "the authorization code grant needs a user agent")
        return await authorization_code_grant(
            http,
            target.metadata,
            client,
            self.user_agent,
            redirect_uri=self.client_metadata.redirect_uris[0],
            resource=target.resource,
            scope=scope,
            dpop=self._dpop_for(target),
        )

    def _dpop_for(self, target: _Target) -> DPoP | None:
        """DPoP where both sides take it: the resource offered it (or the client insists) and the
        authorization server lists ES256 (checked at the token request)."""
        if self.dpop is not None and (self.dpop.required or target.dpop_offered):
            return self.dpop
        return None

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)


def _covers(granted: str | None, required: str | None) -> bool:
    return bool(required) and set((required or "").split()) <= set((granted or "").split())


def _resource(prm: ResourceMetadata, server_url: str) -> str:
    """RFC 8707 `resource`: the resource metadata's identifier (checked to cover this server), else
    the server's canonical URI."""
    return prm.resource or canonical_resource(server_url)
