"""The browser's way through the login proxy: the authorization request, the consent page, the provider,
and back to the client with a code.

Every step is bound to the browser that started it (a session cookie whose digest each stored step
records): a state, a consent form or a callback carried to another browser is refused. The consent token
is single use and names one request of one client, and the form carries a CSRF token derived from the
session and that consent token; the page is shown on every authorization (nothing remembers a consent
that another client's request could ride on). Until the client and its exact redirect URI are known, errors
are shown on a page of the proxy's own, never redirected (no open redirect)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx

from ...protocol.oauth_clients import ClientInfo
from ...protocol.oauth_server import (
    AuthorizationRequest,
    OAuthError,
    authorization_request,
    checked_redirect_uri,
    with_query,
)
from ...transports.http_server.asgi import Receive, Scope, Send
from .clients import ClientRegistry
from .pages import consent_page, error_page
from .records import Login, dump, load
from .sealing import Keys, digest, new_secret
from .store import IdentityStore
from .tokens import TokenService
from .upstream import Upstream, UpstreamError
from .web import cookie, form, header, query, redirect, send_html, session_cookie, session_cookie_name

__all__ = ["LoginFlow"]

log = logging.getLogger(__name__)


@dataclasses.dataclass
class LoginFlow:
    """The authorize, consent and callback endpoints of an authorization server at `issuer`."""

    issuer: str
    resource: str
    scopes: Sequence[str]
    upstream: Upstream
    clients: ClientRegistry
    tokens: TokenService
    store: IdentityStore
    keys: Keys
    http: httpx.AsyncClient
    callback_url: str
    login_ttl: float = 600

    @property
    def secure(self) -> bool:
        return self.issuer.startswith("https:")

    @property
    def cookie_name(self) -> str:
        return session_cookie_name(self.secure)

    async def authorize(self, scope: Scope, send: Send) -> None:
        """GET authorize: the consent page, or why the request cannot go on."""
        try:
            params = query(scope)
        except OAuthError as exc:
            await send_html(send, 400, error_page("Invalid request", exc.description))
            return
        try:
            client = await self.clients.find(params["client_id"]) if params.get("client_id") else None
        except OAuthError as exc:  # its metadata document may not be fetched
            await send_html(send, 400, error_page("Unknown application", exc.description))
            return
        if client is None:
            await send_html(send, 400, error_page("Unknown application", "The client_id is not known here."))
            return
        try:
            redirect_uri = checked_redirect_uri(params.get("redirect_uri"), client.redirect_uris)
        except OAuthError as exc:
            await send_html(send, 400, error_page("Invalid redirect", exc.description))
            return
        try:
            request = authorization_request(
                params, client.client_id, redirect_uri, self.scopes, self.resource
            )
        except OAuthError as exc:
            await redirect(send, self._answer(redirect_uri, params.get("state"), error=exc))
            return
        await self._ask_consent(scope, send, client, request)

    async def _ask_consent(
        self, scope: Scope, send: Send, client: ClientInfo, request: AuthorizationRequest
    ) -> None:
        """The consent page for a checked request, which is kept for this browser until answered."""
        browser = cookie(scope, self.cookie_name)
        extra = []
        if browser is None:
            browser = new_secret()
            extra.append(session_cookie(browser, self.secure))
        login = Login(
            client_id=request.client_id,
            redirect_uri=request.redirect_uri,
            state=request.state,
            code_challenge=request.code_challenge,
            scope=" ".join(request.scopes),
            resource=request.resource,
            browser=digest(browser),
        )
        consent = new_secret()
        await self.store.put(f"consent:{digest(consent)}", dump(login), self.login_ttl)
        fields = {"consent": consent, "client_id": client.client_id, "csrf": self.keys.csrf(browser, consent)}
        page = consent_page(
            client, request.redirect_uri, request.scopes, self.resource, self.upstream.name, fields
        )
        await send_html(send, 200, page, extra)

    async def consent(self, scope: Scope, receive: Receive, send: Send) -> None:
        """POST consent: the user's answer, sent on to the provider (allow) or back to the client (deny)."""
        try:
            login, approved = await self._answered_consent(scope, receive)
        except OAuthError as exc:
            await send_html(send, exc.status, error_page("Consent refused", exc.description))
            return
        if not approved:
            denied = OAuthError("access_denied", "the user did not allow the request")
            await redirect(send, self._answer(login.redirect_uri, login.state, error=denied), status=303)
            return
        state, verifier, nonce = new_secret(), new_secret(), new_secret()
        onward = dataclasses.replace(login, verifier=verifier, nonce=nonce)
        await self.store.put(f"upstream:{digest(state)}", dump(onward), self.login_ttl)
        await redirect(
            send, self.upstream.authorization_url(self.callback_url, state, verifier, nonce), status=303
        )

    async def _answered_consent(self, scope: Scope, receive: Receive) -> tuple[Login, bool]:
        """The request the posted consent form answers, and whether the user allowed it."""
        origin = header(scope, "origin")
        if origin is not None and origin != _origin(self.issuer):
            raise OAuthError("access_denied", "the consent form was posted from another site", 403)
        fields = await form(scope, receive)
        browser, consent = cookie(scope, self.cookie_name), fields.get("consent", "")
        if browser is None or not consent or not self.keys.csrf_matches(fields.get("csrf"), browser, consent):
            raise OAuthError(
                "access_denied", "the consent form is not this browser's (CSRF check failed)", 403
            )
        login = load(Login, await self.store.take(f"consent:{digest(consent)}"))
        if login is None:
            raise OAuthError("access_denied", "this consent was already answered or has expired", 400)
        if login.browser != digest(browser) or fields.get("client_id") != login.client_id:
            raise OAuthError("access_denied", "the consent was given for another request", 403)
        return login, fields.get("decision") == "approve"

    async def callback(self, scope: Scope, send: Send) -> None:
        """GET callback: the provider's answer, turned into a code for the client."""
        try:
            params = query(scope)
        except OAuthError as exc:
            await send_html(send, 400, error_page("Sign-in refused", exc.description))
            return
        browser, state = cookie(scope, self.cookie_name), params.get("state", "")
        key = f"upstream:{digest(state)}"
        login = load(Login, await self.store.get(key)) if state else None
        if login is None or browser is None or login.browser != digest(browser):
            why = "This sign-in was not started in this browser, or it was already completed."
            await send_html(send, 400, error_page("Sign-in refused", why))
            return
        if await self.store.take(key) is None:  # the same answer, twice at once
            await send_html(send, 400, error_page("Sign-in refused", "This sign-in was already completed."))
            return
        code = params.get("code")
        denied = OAuthError("access_denied", f"{self.upstream.name} did not sign the user in")
        # RFC 9207: an answer naming another issuer is a mix-up, whatever its code
        mixed_up = (
            self.upstream.issuer is not None
            and params.get("iss", self.upstream.issuer) != self.upstream.issuer
        )
        if not code or "error" in params or mixed_up:
            await redirect(send, self._answer(login.redirect_uri, login.state, error=denied))
            return
        try:
            subject, upstream = await self.upstream.redeem(
                code, self.callback_url, login.verifier, login.nonce, self.http
            )
        except UpstreamError as exc:
            log.warning("the identity provider's code was not redeemed: %s", exc)
            await redirect(send, self._answer(login.redirect_uri, login.state, error=denied))
            return
        issued = await self.tokens.grant(login, subject, upstream)
        await redirect(send, self._answer(login.redirect_uri, login.state, code=issued))

    def _answer(
        self,
        redirect_uri: str,
        state: str | None,
        *,
        code: str | None = None,
        error: OAuthError | None = None,
    ) -> str:
        """The client's redirect URI with the answer, its state and this issuer (RFC 9207)."""
        params: dict[str, str | None] = {"code": code}
        if error is not None:
            params = {"error": error.error, "error_description": error.description}
        return with_query(redirect_uri, {**params, "state": state, "iss": self.issuer})


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
