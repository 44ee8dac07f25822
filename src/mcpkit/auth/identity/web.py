"""The HTTP vocabulary of the login proxy's endpoints: forms and queries (each parameter at most once,
RFC 6749 §3.1), the browser's session cookie, Basic client credentials, and no-store responses."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Final
from urllib.parse import parse_qsl, unquote

import orjson

from ...protocol.http_rules import HTTPRefusal
from ...protocol.oauth_server import OAuthError
from ...transports.http_server.asgi import Receive, Scope, Send, read_body, respond

__all__ = [
    "basic_credentials",
    "cookie",
    "form",
    "header",
    "query",
    "redirect",
    "send_html",
    "send_json",
    "session_cookie",
    "session_cookie_name",
]

_MAX_FORM: Final = 64 * 1024
_NO_STORE: Final = [(b"cache-control", b"no-store"), (b"pragma", b"no-cache")]
# The pages are never framed (clickjacking the consent button) and run no script at all.
_PAGE_HEADERS: Final = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make the form's Origin "null"
    (b"x-content-type-options", b"nosniff"),
]


def _single(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in pairs:
        if name in found:
            raise OAuthError("invalid_request", f"the parameter {name!r} is repeated")
        found[name] = value
    return found


def query(scope: Scope) -> dict[str, str]:
    """The query string's parameters; OAuthError if one is repeated."""
    raw = scope.get("query_string", b"").decode("latin-1")
    return _single(parse_qsl(raw, keep_blank_values=False))


async def form(scope: Scope, receive: Receive) -> dict[str, str]:
    """The urlencoded body's parameters; OAuthError if it is not a form or a parameter is repeated."""
    kind = header(scope, "content-type") or ""
    if kind.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded")
    try:
        body = await read_body(
            {"content-length": header(scope, "content-length") or "0"}, receive, _MAX_FORM, 10.0
        )
    except HTTPRefusal as refusal:
        raise OAuthError("invalid_request", refusal.message, refusal.status) from None
    return _single(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=False))


def header(scope: Scope, name: str) -> str | None:
    """The first value of header `name` (lower case)."""
    wanted = name.encode()
    for key, value in scope["headers"]:
        if key.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


def cookie(scope: Scope, name: str) -> str | None:
    """The value of cookie `name`, if the browser sent it."""
    for key, value in scope["headers"]:
        if key.lower() != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            found, _, given = part.strip().partition("=")
            if found == name and given:
                return str(given)
    return None


def session_cookie_name(secure: bool) -> str:
    """The browser session cookie's name: over https with the __Host- prefix, so no sibling subdomain can
    plant one (a session id an attacker chose would let its login ride in the victim's browser)."""
    return "__Host-mcpkit_login" if secure else "mcpkit_login"


def session_cookie(value: str, secure: bool) -> tuple[bytes, bytes]:
    """The Set-Cookie header binding a login to this browser: HttpOnly, and SameSite=Lax so the browser
    still sends it when the provider redirects back (a top-level GET) but never on cross-site POSTs."""
    flags = f"{session_cookie_name(secure)}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600"
    return b"set-cookie", (flags + ("; Secure" if secure else "")).encode()


def basic_credentials(scope: Scope) -> tuple[str, str] | None:
    """The client id and secret of an `Authorization: Basic` header (RFC 6749 §2.3.1: form-urlencoded)."""
    value = header(scope, "authorization")
    if value is None or not value.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(value[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise OAuthError("invalid_client", "the Basic credentials are malformed", 401) from None
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise OAuthError("invalid_client", "the Basic credentials are malformed", 401)
    return unquote(client_id), unquote(secret)


async def send_json(send: Send, status: int, body: object, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A JSON response that no cache keeps (RFC 6749 §5.1)."""
    headers = [(b"content-type", b"application/json"), *_NO_STORE, *extra]
    await respond(send, status, orjson.dumps(body), headers)


async def send_html(send: Send, status: int, page: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """An HTML page of the proxy's own, never cached or framed."""
    await respond(send, status, page.encode(), [*_PAGE_HEADERS, *_NO_STORE, *extra])


async def redirect(
    send: Send, location: str, extra: Sequence[tuple[bytes, bytes]] = (), status: int = 302
) -> None:
    """A redirect to `location` (303 after a form post, so the browser follows with GET)."""
    headers = [(b"location", location.encode("latin-1")), *_NO_STORE, *extra]
    await respond(send, status, b"", headers)
