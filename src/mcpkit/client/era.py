"""Which era a server speaks: probe with server/discover, fall back to initialize by the spec's rules.

Spec 2026-07-28 versioning "Backward Compatibility" and stdio/Streamable HTTP "Backward
Compatibility": a DiscoverResult (one with a `supportedVersions` list: mocks answer anything with
`{}`) means stateless; a recognized stateless error (UnsupportedProtocolVersion with its `supported`
list) means stateless at another version; anything else, or silence, means legacy. The fallback is
never keyed to one error code. The answer is a property of the server, so it is remembered for
the life of the process under a key the caller chooses (command line or origin).

The probe's timeout measures the server's silence: time the transport spends with the user at an
OAuth login the probe's 401 started does not count (the probe abandoned would fall back, and the
fallback initialize log in a second time, or fail against a 2026-07-28-only server).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Final

import anyio

from ..protocol.connection import Connection
from ..protocol.errors import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalError,
    MCPError,
    RemoteError,
)
from ..protocol.jsonrpc import JSON
from ..protocol.lifecycle import Negotiated
from ..protocol.stateless import SERVER_INFO
from ..protocol.versions import is_stateless
from ..runtime.groups import single_error
from ..runtime.session import Session
from ..runtime.stream import StreamAttribute

__all__ = ["Era", "discover", "forget", "remember", "remembered", "settle"]

# The codes only a 2026-07-28 server sends; any other error to the probe reads as legacy.
STATELESS_ERRORS: Final = frozenset(
    {HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)


class Era(enum.Enum):
    AUTO = "auto"  # probe, then remember
    STATELESS = "stateless"  # 2026-07-28: no handshake, _meta on every request
    HANDSHAKE = "handshake"  # initialize (2024-11-05 .. 2025-11-25)

    @classmethod
    def _missing_(cls, value: object) -> Era | None:
        return cls.STATELESS if value == "modern" else None  # the name before 0.1: still understood


_REMEMBERED: dict[str, Era] = {}


def remembered(key: str | None) -> Era | None:
    return _REMEMBERED.get(key) if key is not None else None


def remember(key: str | None, era: Era) -> None:
    if key is not None:
        _REMEMBERED[key] = era


def forget(key: str | None = None) -> None:
    """Drop what was learnt about one server (or all): the next connection probes again."""
    if key is None:
        _REMEMBERED.clear()
    else:
        _REMEMBERED.pop(key, None)


async def settle(
    session: Session,
    era: Era,
    versions: tuple[str, ...],
    handshake_version: str,
    probe_timeout: float,
    timeout: float | None,
) -> Era:
    """Agree on `era` with the server (AUTO: probe, then fall back to initialize); the era agreed."""
    if era is not Era.HANDSHAKE:
        probe = probe_timeout if era is Era.AUTO else timeout
        agreed = await discover(session, versions, probe, probing=era is Era.AUTO)
        if agreed is not None:
            await session.apply(session.connection.adopt_stateless(agreed))
            return Era.STATELESS
    try:
        await session.initialize(handshake_version, timeout)
    except RemoteError as exc:
        # A server slow to start may answer the probe we gave up on, settle on 2026-07-28 and refuse
        # the fallback initialize with -32022: stateless evidence, so probe once more (as the official
        # SDK's client does) rather than give up.
        if era is not Era.AUTO or exc.code != UNSUPPORTED_PROTOCOL_VERSION:
            raise
        agreed = await discover(session, versions, timeout, probing=False)
        assert agreed is not None  # probing=False raises instead
        await session.apply(session.connection.adopt_stateless(agreed))
        return Era.STATELESS
    return Era.HANDSHAKE


def _mutual(offered: object, mine: tuple[str, ...]) -> str | None:
    """The newest stateless version both sides name."""
    if not isinstance(offered, list):
        return None
    both = [v for v in mine if is_stateless(v) and v in offered]
    return both[-1] if both else None


async def discover(
    session: Session, versions: tuple[str, ...], timeout: float | None, *, probing: bool
) -> Negotiated | None:
    """Run server/discover and agree on a stateless version; None when the server is legacy (probing only).

    A pinned stateless client (`probing=False`) raises instead of returning None.
    """
    connection = session.connection
    version = _mutual(list(versions), versions)
    if version is None:
        raise LocalError("this client is configured without any 2026-07-28 version")
    for _attempt in range(2):
        rid, message = connection.stateless_request("server/discover", version)
        try:
            result = await _answer(session, rid, message, timeout)
        except RemoteError as exc:
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                offered = exc.data.get("supported") if isinstance(exc.data, dict) else None
                other = _mutual(offered, versions)
                if other is not None:  # maybe the same one: a server may refuse it once (a retry is cheap)
                    version = other
                    continue
                raise LocalError(
                    f"the server supports none of this client's versions (it offers {offered})"
                ) from None
            if exc.code in STATELESS_ERRORS or not probing:
                raise
            return None
        except MCPError as exc:  # timed out: a silent legacy server; a closed connection is no answer
            if not probing or exc.code == CONNECTION_CLOSED:
                raise
            return None
        if not isinstance(result.get("supportedVersions"), list):
            # A legacy server that answers any method with `{}` has not said it is stateless.
            if probing:
                return None
            raise RemoteError(
                INVALID_PARAMS,
                "the server's server/discover result has no supportedVersions list, so it is no "
                "2026-07-28 server; connect with era='auto' or 'handshake'",
            )
        return _agreement(connection, result, version, versions)
    raise LocalError("the server kept refusing the protocol version it advertised")


async def _answer(session: Session, rid: Any, message: JSON, timeout: float | None) -> JSON:
    authorizing = session.stream.extra(StreamAttribute.authorizing, None)
    if timeout is None or authorizing is None:
        return await session.send_built(rid, message, timeout=timeout)
    with single_error():  # the probe's own failure, not a group of one, is what the caller reads
        async with anyio.create_task_group() as tg:
            tg.start_soon(_postpone_while, session, rid, authorizing, min(timeout / 2, 0.5))
            result = await session.send_built(rid, message, timeout=timeout)
            tg.cancel_scope.cancel()
    return result


async def _postpone_while(session: Session, rid: Any, authorizing: Callable[[], bool], every: float) -> None:
    while True:
        await anyio.sleep(every)
        if authorizing():
            session.postpone(rid)


def _agreement(connection: Connection, result: JSON, asked: str, versions: tuple[str, ...]) -> Negotiated:
    chosen = _mutual(result.get("supportedVersions"), versions) or asked
    caps = result.get("capabilities")
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    instructions = result.get("instructions")
    return Negotiated(
        chosen,
        connection.info,
        connection.capabilities,
        info if isinstance(info, dict) else {},
        caps if isinstance(caps, dict) else {},
        instructions if isinstance(instructions, str) else None,
    )
