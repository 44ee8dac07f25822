"""Streamable HTTP rules as pure functions (transports "Streamable HTTP", 2025-11-25). No I/O.

Each rule either returns a value or raises `HTTPRefusal`, which a driver turns into a status and a
JSON-RPC error body. Event ids are `<stream>-<seq>`: `seq` counts every event of a session, so an id
is unique within the session, and `stream` names the SSE stream it was sent on ("Resumability").
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Final

from .errors import INVALID_REQUEST
from .jsonrpc import JSON, Message, Notification, Request, RequestId
from .stateless import is_stateless_request
from .versions import SUPPORTED_VERSIONS, V2025_03_26, is_stateless

__all__ = [
    "DEFAULT_HOSTS",
    "DEFAULT_ORIGINS",
    "SESSION_NOT_FOUND",
    "HTTPRefusal",
    "PostKind",
    "accepts",
    "agreed_version",
    "allowed",
    "asks_for_notifications",
    "check_post_headers",
    "format_event_id",
    "guard",
    "media_type",
    "parse_event_id",
    "post_kind",
    "refuse_repeats",
    "request_version",
]

_LOCAL: Final = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_HOSTS: Final = _LOCAL
DEFAULT_ORIGINS: Final = tuple(f"{scheme}://{host}" for scheme in ("http", "https") for host in _LOCAL)
SESSION_NOT_FOUND: Final = -32001
_PORT: Final = re.compile(r"(.*?)(:\d+)?")
_SINGLE: Final = frozenset({"mcp-session-id", "mcp-protocol-version", "last-event-id"})
_EVENT_ID: Final = re.compile(r"([A-Za-z0-9_.]+)-([0-9]{1,18})")


class HTTPRefusal(Exception):
    """Refused before any response started: an HTTP status and a JSON-RPC error (code, message)."""

    def __init__(
        self,
        status: int,
        message: str,
        code: int = INVALID_REQUEST,
        *,
        data: JSON | None = None,
        **headers: str,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.data = data  # the JSON-RPC error's `data`, when there is more to say than the message
        self.headers = headers
        self.rid: RequestId | None = None  # the refused request's id, when it was read before the refusal


_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"


def asks_for_notifications(method: str, params: dict[str, object]) -> bool:
    """Whether a request asked for messages before its response, which a JSON answer has no room for:
    a subscriptions/listen stream, `_meta.progressToken` (progress), or a 2026-07-28 log level."""
    if method == "subscriptions/listen":
        return True
    meta = params.get("_meta")
    return isinstance(meta, dict) and ("progressToken" in meta or _LOG_LEVEL in meta)


class PostKind(enum.Enum):
    """How a server answers one POSTed message."""

    STATELESS_ERA = "a 2026-07-28 request: checked headers, no session"
    STATELESS_NOTICE = "a 2026-07-28 notification: no session to act in, accepted (202) and dropped"
    SESSIONLESS = "a handshake-era message on a server that keeps no sessions"
    NEW_SESSION = "an initialize that opens a session"
    IN_SESSION = "a message for the session its Mcp-Session-Id names"


def post_kind(headers: Mapping[str, str], message: Message, keeps_sessions: bool) -> PostKind:
    """Which way a POST goes, from its (lower-cased) headers and its message alone.

    versioning "Backward Compatibility": a request with the stateless `_meta`, or a stateless
    MCP-Protocol-Version, is of the stateless era; everything else is of the handshake era, served in a
    session unless the server keeps none (`keeps_sessions` False). An initialize naming no session opens
    one; any other message belongs to the session it names (and is refused later if it names none).
    A 2026-07-28 notification naming no session is accepted and dropped, as the official servers do
    (the TypeScript client sends notifications/cancelled when it closes a subscription stream).
    """
    if isinstance(message, Request | Notification):
        header = headers.get("mcp-protocol-version")
        if is_stateless_request(message.params) or (header in SUPPORTED_VERSIONS and is_stateless(header)):
            if isinstance(message, Request):
                return PostKind.STATELESS_ERA
            if "mcp-session-id" not in headers:
                return PostKind.STATELESS_NOTICE
    if not keeps_sessions:
        return PostKind.SESSIONLESS
    if isinstance(message, Request) and message.method == "initialize" and "mcp-session-id" not in headers:
        return PostKind.NEW_SESSION
    return PostKind.IN_SESSION


def media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def accepts(headers: Mapping[str, str], *types: str) -> bool:
    """Whether the Accept header lists every one of `types` (or */*)."""
    offered = _offered(headers.get("accept", ""))
    return "*/*" in offered or all(t in offered for t in types)


@lru_cache(maxsize=64)  # a client sends the same Accept on every request
def _offered(accept: str) -> frozenset[str]:
    return frozenset(media_type(part) for part in accept.split(","))


def check_post_headers(headers: Mapping[str, str]) -> None:
    """A POST must accept both answers (406) and carry JSON (415) ("Sending Messages to the Server")."""
    if not accepts(headers, "application/json", "text/event-stream"):
        raise HTTPRefusal(406, "Not Acceptable: Accept must list application/json and text/event-stream")
    if media_type(headers.get("content-type", "")) != "application/json":
        raise HTTPRefusal(415, "Unsupported Media Type: Content-Type must be application/json")


def refuse_repeats(repeated: frozenset[str]) -> None:
    """400 for a handshake-era header sent twice: a proxy and this server could read different copies."""
    twice = repeated & _SINGLE
    if twice:
        raise HTTPRefusal(400, f"Bad Request: the {min(twice)} header appears more than once")


def allowed(value: str, allowed_values: tuple[str, ...]) -> bool:
    """Host/Origin check ("Security Warning"): an entry without a port matches any port; "*" matches all."""
    value = value.strip().lower()
    if not value:
        return False
    match = _PORT.fullmatch(value)
    bare = match.group(1) if match else value
    return "*" in allowed_values or value in allowed_values or bare in allowed_values


def guard(headers: Mapping[str, str], hosts: tuple[str, ...], origins: tuple[str, ...]) -> None:
    """Refuse a request from outside the trusted hosts and origins ("Security Warning": servers MUST
    validate Origin, and bind to localhost or check Host against DNS rebinding).

    A Host outside `hosts` is 421 Misdirected Request; an Origin outside `origins` is 403 (a request
    without Origin, from a non-browser client, passes). Entries are lower-case; see `allowed`.
    """
    host = headers.get("host", "")
    if not allowed(host, hosts):
        raise HTTPRefusal(421, f"Misdirected Request: Host {host[:200]!r} not allowed{_HOW.format(k='host')}")
    origin = headers.get("origin")
    if origin is not None and not allowed(origin, origins):
        raise HTTPRefusal(403, f"Forbidden: Origin {origin[:200]!r} not allowed{_HOW.format(k='origin')}")


# The refusal names the setting that lifts it, for the person who bound the server beyond localhost.
_HOW: Final = " (the server allows more with mcpkit serve --allow-{k}, or StreamableHTTPApp(allowed_{k}s=))"


def request_version(header: str | None, negotiated: str | None, strict: bool = False) -> str:
    """The version a request speaks ("Protocol Version Header"): the session's negotiated one once known.

    Absent: the negotiated version, else 2025-03-26 (the spec's SHOULD assume). Unsupported: 400 (MUST
    respond with 400 Bad Request). Supported but not the negotiated version: 400 when `strict`; otherwise
    accepted, as the reference SDKs do and the official conformance suite expects (it sends 2025-03-26 on
    sessions that negotiated 2025-11-25), with the negotiated version still in force.
    """
    if header is None:
        return negotiated or V2025_03_26
    if header not in SUPPORTED_VERSIONS:
        supported = ", ".join(SUPPORTED_VERSIONS)
        message = f"Bad Request: unsupported MCP-Protocol-Version {header!r} (supported: {supported})"
        raise HTTPRefusal(400, message)
    if negotiated is None or header == negotiated:
        return header
    if strict:
        raise HTTPRefusal(
            400,
            f"Bad Request: MCP-Protocol-Version {header!r} does not match the version "
            f"negotiated for this session ({negotiated!r})",
        )
    return negotiated


def agreed_version(message: JSON) -> str | None:
    """The protocolVersion an initialize result carries, if it is one with a supported version."""
    result = message.get("result")
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    return version if version in SUPPORTED_VERSIONS else None


def format_event_id(stream_id: str, seq: int) -> str:
    if _EVENT_ID.fullmatch(f"{stream_id}-{seq}") is None:
        raise ValueError(f"stream id {stream_id!r} must be letters, digits, '_' or '.'")
    return f"{stream_id}-{seq}"


def parse_event_id(value: str) -> tuple[str, int] | None:
    """(stream id, sequence number) of an id `format_event_id` made; None for anything else."""
    match = _EVENT_ID.fullmatch(value.strip())
    if match is None:
        return None
    return match.group(1), int(match.group(2))
