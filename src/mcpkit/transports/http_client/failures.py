"""Why an HTTP exchange failed, in words a user can act on, and the JSON-RPC error that carries it.

A client transport never lets a failed POST leave a request waiting: the failure becomes an error
response to that request (code CONNECTION_CLOSED), so the caller's await ends with this text.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import httpx

from ...protocol.errors import CONNECTION_CLOSED, CONNECTION_FAILED_DATA
from ...protocol.jsonrpc import encode, error_response

__all__ = [
    "describe_error",
    "describe_status",
    "describe_unexpected",
    "error_reply",
    "read_head",
    "too_large",
]

_HEAD = 500
_SHOWN = 120  # bytes of an unexpected body quoted in an error


def _is_tls(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError | ssl.CertificateError):
            return True
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return "SSL" in text or "CERTIFICATE" in text.upper()


def describe_error(exc: httpx.HTTPError, method: str, url: str) -> str:
    """One line for a transport-level failure: refused, TLS, timeout, or a broken connection."""
    if isinstance(exc, httpx.TimeoutException):
        return f"{method} {url} timed out ({type(exc).__name__}); the server did not answer in time"
    if isinstance(exc, httpx.ConnectError):
        if _is_tls(exc):
            return f"TLS handshake with {url} failed (ConnectError: {exc})"
        reason = str(exc) or "connection refused"
        return f"cannot connect to {url} (ConnectError: {reason}); is the server running?"
    return f"{method} {url} failed: {type(exc).__name__}: {exc}"


def describe_status(response: httpx.Response, head: bytes) -> str:
    """One line for an HTTP error status; 401/403 say what the server wants."""
    status = response.status_code
    text = _said(head)
    line = f"{_status_line(response)} from {response.url}"
    if status == 401:
        challenge = response.headers.get("www-authenticate")
        hint = f" (WWW-Authenticate: {challenge})" if challenge else ""
        return f"{line}: the server wants credentials{hint}; send an Authorization header, or authorize"
    if status == 403:
        return f"{line}: the credentials were refused or lack permission{': ' + text if text else ''}"
    if status == 404:
        text = "" if text == _status_line(response).partition(" 404 ")[2] else text
        return f"{line}: no MCP endpoint at this path{': ' + text if text else ''}"
    return f"{line}: {text}" if text else line


def _said(head: bytes) -> str:
    """An error body as text: a JSON-RPC error's message, else the body itself."""
    text = head.decode(errors="replace").strip()
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return text
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else text


def describe_unexpected(response: httpx.Response, head: bytes, why: str) -> str:
    """One line for a successful-looking answer that is no MCP answer: status, content type, first bytes."""
    request = response.request
    kind = response.headers.get("content-type") or "no Content-Type"
    line = f"{request.method} {request.url} answered {_status_line(response)} ({kind})"
    location = response.headers.get("location")
    if response.is_redirect and location:
        line += f", redirecting to {location} (not followed)"
    start = head[:_SHOWN].decode(errors="replace")
    body = f"the body starts {start!r}" if head else "an empty body"
    return f"{line}: {why}; {body}"


def _status_line(response: httpx.Response) -> str:
    # HTTP/1.1 lets the reason phrase be empty (hypercorn's h11 sends none) and HTTP/2 has none at all
    reason = response.reason_phrase or httpx.codes.get_reason_phrase(response.status_code)
    return f"HTTP {response.status_code} {reason}".rstrip()


async def read_head(response: httpx.Response, limit: int = _HEAD) -> bytes:
    """The first `limit` bytes of an error body, without holding a body of any size."""
    head = bytearray()
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) >= limit:
            break
    return bytes(head[:limit])


def error_reply(message: dict[str, Any], text: str, connection: bool = False) -> bytes | None:
    """The error response a failed request gets locally; None for what is not a request. `connection`:
    the connection itself failed (the client raises ConnectionFailed), not the server's answer."""
    rid = message.get("id")
    if "method" not in message or not isinstance(rid, str | int):
        return None
    return encode(
        error_response(rid, CONNECTION_CLOSED, text, CONNECTION_FAILED_DATA if connection else None)
    )


def too_large(limit: int) -> str:
    return f"the response exceeds the {limit}-byte limit (max_message)"
