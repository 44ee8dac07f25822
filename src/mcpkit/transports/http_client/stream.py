"""Streamable HTTP, client side: each message is POSTed; answers come back as JSON or as an SSE stream.

Spec: transports "Streamable HTTP" (2025-11-25). The client sends Mcp-Session-Id once the server gave one
and MCP-Protocol-Version once negotiated, listens on a GET stream for server-initiated messages, and ends
the session with DELETE. A stream that drops before its response is resumed with a GET carrying
Last-Event-ID, after the server's `retry` delay ("Resumability and Redelivery"). A 404 to a request carrying
the session id means the session is gone: by default the client replays its handshake for a new session and
resends ("Session Management" 5). A 400/404/405 to the first initialize means a 2024-11-05 server: the
client falls back to HTTP+SSE ("Backwards Compatibility"). Every failure of a request becomes a JSON-RPC
error for it. A 2026-07-28 request (stateless `_meta`) is one POST with its metadata headers and no session or
resumption; its refusal's JSON-RPC error is its answer (`stateless_traffic`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, suppress
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from ...protocol.framing import Oversized
from ...protocol.http_rules import agreed_version
from ...protocol.jsonrpc import JSON
from ...protocol.sse import SSEDecoder
from ...runtime.stream import Attributes, Deliver, Inbound, Inbox, Outgoing, StreamAttribute, deliver_each
from .backoff import Backoff
from .failures import describe_error, describe_status, describe_unexpected, error_reply, read_head, too_large
from .handshake import new_session, renew_hint
from .inbound import NotAnAnswer, Payload, TooLarge, answers, decoded, progressed, related
from .legacy_sse import LegacyEndpointError, LegacySSEStream, connect_legacy, long_lived
from .stateless_traffic import StatelessTraffic, error_answer

__all__ = ["HTTPClientStream"]

_DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024
_FALLBACK_STATUSES = (400, 404, 405)
_ERROR_BODY = 64 * 1024  # a refusal's JSON-RPC error, read whole for its code and data
_STATELESS_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class HTTPClientStream(Attributes):
    """A MessageStream over Streamable HTTP. Create it with `open_http_stream`."""

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        tg: TaskGroup,
        *,
        max_message: int = _DEFAULT_MAX_MESSAGE,
        reconnect_attempts: int = 3,
        reconnect_on_404: bool = True,
        retry_ms: int = 1000,
        legacy_fallback: bool = True,
        backoff: Backoff | None = None,
    ) -> None:
        self.url = url
        self.http = http
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.max_message = max_message
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_on_404 = reconnect_on_404
        self.retry_ms = retry_ms  # until the server sends its own `retry`
        self.legacy_fallback = legacy_fallback
        self.backoff = backoff or Backoff()
        self.legacy: LegacySSEStream | None = None
        self._tg = tg
        self._inbox = Inbox[Payload | Inbound]()
        self.authorizing: Callable[[], bool] | None = None  # whether the user is at a login now
        self._listening = False
        self._handshake: list[bytes] = []  # initialize, notifications/initialized: replayed after a 404
        self._renewing = anyio.Lock()
        self._abandoned: set[Any] = set()  # cancelled requests, whose streams are not resumed
        self.stateless = StatelessTraffic()

    async def deliver_to(self, deliver: Deliver) -> None:
        await deliver_each(self._inbox, deliver)

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        authorizing = self.authorizing
        return {} if authorizing is None else {StreamAttribute.authorizing: lambda: authorizing}

    async def send(self, out: Outgoing) -> None:
        if self.legacy is not None:
            await self.legacy.send(out)
            return
        data = out.data
        message = out.decoded
        if self.stateless.cancel(message):
            return
        method = message.get("method")
        if method in ("initialize", "notifications/initialized") and len(self._handshake) < 2:
            self._handshake.append(data)
        elif method == "notifications/cancelled":
            self._abandoned.add((message.get("params") or {}).get("requestId"))
        self._tg.start_soon(self._post, data, message)

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _get(self, headers: dict[str, str]) -> AbstractAsyncContextManager[httpx.Response]:
        """A GET for an SSE stream, which may stay quiet for as long as the server likes."""
        return self.http.stream("GET", self.url, headers=headers, timeout=long_lived(self.http))

    def _post_headers(self) -> dict[str, str]:
        headers = self._headers("application/json, text/event-stream")
        headers["Content-Type"] = "application/json"
        return headers

    # ---- POST --------------------------------------------------------------------------------

    async def _post(self, data: bytes, message: JSON, renewed: bool = False) -> None:
        stateless = self.stateless.headers(message)
        if not stateless:
            return await self._exchange(data, message, renewed)
        with self.stateless.stream(message.get("id")):  # 2026-07-28: closing the stream cancels it
            await self._exchange(data, message, renewed, {**_STATELESS_ACCEPT, **stateless})

    async def _exchange(
        self, data: bytes, message: JSON, renewed: bool, stateless: dict[str, str] | None = None
    ) -> None:
        sent_with = self.session_id
        rid = message.get("id") if "method" in message else None
        headers = stateless or self._post_headers()
        # A subscriptions/listen stream may stay quiet for as long as nothing changes.
        quiet = long_lived(self.http) if message.get("method") == "subscriptions/listen" else None
        decoder: SSEDecoder | None = None
        head = b""
        try:
            async with self.http.stream(
                "POST", self.url, content=data, headers=headers, timeout=quiet or httpx.USE_CLIENT_DEFAULT
            ) as r:
                if r.status_code >= 400:
                    head = await read_head(r, _ERROR_BODY if stateless else 500)
                else:
                    decoder = await self._accept(r, message, rid, stateless is None)
        except httpx.HTTPError as exc:
            self._fail(message, describe_error(exc, "POST", self.url), connection=True)
            return
        except TooLarge:
            self._fail(message, too_large(self.max_message))
            return
        except NotAnAnswer as exc:
            self._fail(message, str(exc))
            return
        if r.status_code >= 400 and stateless:  # a JSON-RPC error body is the answer, else a plain failure
            answer = error_answer(message, head) or error_reply(message, describe_status(r, head[:500]))
            if answer is not None:
                self._inbox.put(answer)
        elif r.status_code >= 400:
            await self._refused(data, message, r, head, sent_with, renewed)
        elif decoder is not None and stateless:
            self._fail(message, "the SSE stream closed before the response (2026-07-28 has no resuming)")
        elif decoder is not None:
            await self._resume(message, rid, decoder)

    async def _accept(
        self, response: httpx.Response, message: JSON, rid: Any, sessions: bool = True
    ) -> SSEDecoder | None:
        """Read a successful answer; returns the stream's decoder when it ended before the response."""
        if response.status_code == 202 or rid is None:
            # Only a request has an answer; a body to a notification or response breaks "Sending
            # Messages to the Server" 5, and answering it back with an error could loop forever.
            return None
        if response.status_code != 200:  # a redirect is not followed: it would carry the credentials on
            raise NotAnAnswer(describe_unexpected(response, await read_head(response), "no MCP answer"))
        session_id = response.headers.get("mcp-session-id")
        if session_id and sessions:  # a 2026-07-28 exchange ignores any session id
            self.session_id = session_id
        initialize = message.get("method") == "initialize"
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            decoder = SSEDecoder(self.max_message)
            try:
                if await self._read_events(response, decoder, rid, initialize):
                    return None
            except httpx.TransportError:
                if decoder.last_event_id is None:
                    raise  # nothing to resume from: the failure itself is the error
            return decoder
        await self._read_json(response, message, rid, initialize)
        return None

    async def _read_json(self, response: httpx.Response, message: JSON, rid: Any, initialize: bool) -> None:
        """A JSON answer: the response to `rid`, else a failure naming what came instead (an empty
        body, an HTML page), so the request ends now rather than at its timeout."""
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_message:
                raise TooLarge
        payload = bytes(body)
        answer = decoded(payload)
        if not answers(answer, rid):
            refusal = error_answer(message, payload)  # a JSON-RPC error with a null id, say
            if refusal is None:
                raise NotAnAnswer(describe_unexpected(response, payload, "not a JSON-RPC response to it"))
            answer = refusal
        await self._take(answer, initialize)

    async def _read_events(
        self, response: httpx.Response, decoder: SSEDecoder, rid: Any = None, initialize: bool = False
    ) -> bool:
        """Deliver each event's message; True once the response to `rid` has come."""
        answered = False
        async for chunk in response.aiter_bytes():
            try:
                events = decoder.feed(chunk)
            except ValueError:
                if rid is not None:
                    raise TooLarge from None
                self._inbox.put(Oversized(self.max_message))
                return False
            for event in events:
                if not event.data:
                    continue  # a priming event: only an id (and retry) to resume from
                message = decoded(event.data.encode())
                await self._take(message, initialize, rid)
                answered = answered or (rid is not None and answers(message, rid))
            if answered:
                return True
        return False

    async def _resume(self, message: JSON, rid: Any, decoder: SSEDecoder) -> None:
        """The POST stream ended before its response: GET with Last-Event-ID after `retry` ms.

        A server may close each resumed stream again ("poll", "Sending Messages" 6), so only
        reconnections that bring nothing count against `reconnect_attempts`, and each of those
        waits longer (`backoff`); a cancelled request stops.
        """
        last_id = decoder.last_event_id
        if last_id is None:
            self._fail(message, "the SSE stream closed before the response, with no event id to resume from")
            return
        retry = decoder.retry if decoder.retry is not None else self.retry_ms
        failures = 0
        while failures < self.reconnect_attempts:
            await anyio.sleep(self.backoff.delay(retry, failures))
            if rid in self._abandoned:
                return
            decoder = SSEDecoder(self.max_message)
            outcome = await self._resume_once(message, rid, decoder, last_id)
            if outcome is not None:
                return
            failures = 0 if progressed(decoder, last_id) else failures + 1
            last_id = decoder.last_event_id or last_id
            retry = decoder.retry if decoder.retry is not None else retry
        self._fail(
            message, f"lost the SSE stream before the response; {self.reconnect_attempts} retries failed"
        )

    async def _resume_once(self, message: JSON, rid: Any, decoder: SSEDecoder, last_id: str) -> bool | None:
        """One resumption GET: True when answered, False when the request failed, None to go on."""
        headers = self._headers("text/event-stream")
        headers["Last-Event-ID"] = last_id
        try:
            async with self._get(headers) as r:
                if r.status_code != 200:
                    self._fail(message, f"resuming the stream: {describe_status(r, await read_head(r))}")
                    return False
                return True if await self._read_events(r, decoder, rid) else None
        except httpx.TransportError:
            return None
        except TooLarge:
            self._fail(message, too_large(self.max_message))
            return False

    async def _refused(
        self,
        data: bytes,
        message: JSON,
        response: httpx.Response,
        head: bytes,
        sent: str | None,
        renewed: bool,
    ) -> None:
        status, text = response.status_code, describe_status(response, head)
        if message.get("method") == "initialize" and status in _FALLBACK_STATUSES and self.legacy_fallback:
            await self._fall_back(data, message, text)
        elif status == 404 and sent is not None:
            if self.reconnect_on_404 and not renewed and await self._renew(sent):
                await self._post(data, message, renewed=True)
            else:
                ended = f"the server ended session {sent} (HTTP 404 Not Found)"
                self._fail(message, f"{ended}; {renew_hint(self.reconnect_on_404)}")
        else:
            self._fail(message, text)

    # ---- a new session after 404, or the legacy transport --------------------------------------

    async def _renew(self, expired: str) -> bool:
        """Replay the handshake for a new session; True when there is one (maybe renewed by another task)."""
        async with self._renewing:
            if self.session_id != expired:
                return self.session_id is not None
            if len(self._handshake) < 2:
                return False
            try:
                return await self._replay_handshake()
            except (httpx.HTTPError, TooLarge):
                return False

    async def _replay_handshake(self) -> bool:
        initialize, initialized = self._handshake
        headers = self._post_headers()  # other POSTs keep the old id until the new one is known
        session_id = await new_session(self.http, self.url, headers, initialize, self.max_message)
        if session_id is None:
            return False
        self.session_id = session_id
        await self.http.post(self.url, content=initialized, headers=self._post_headers())
        if not self._listening:
            self._start_listening()
        return True

    async def _fall_back(self, data: bytes, message: JSON, why: str) -> None:
        try:
            legacy = await connect_legacy(self.url, self.http, self._tg, self._inbox, self.max_message)
        except LegacyEndpointError as exc:
            neither = "nor is it a 2024-11-05 HTTP+SSE endpoint"
            # the GET often fails just as the POST did: say that once
            self._fail(message, f"{why} ({neither})" if str(exc) == why else f"{why}; {neither}: {exc}")
            return
        self.legacy = legacy
        await legacy.send(Outgoing(data, None, message))

    # ---- the GET stream ------------------------------------------------------------------------

    async def _take(self, message: bytes | JSON, initialize: bool, rid: Any = None) -> None:
        """Hand a server's message (that came on `rid`'s response stream, if any) to the session, decoded
        when it could be (the session parses nothing twice), after learning what it tells the transport."""
        if isinstance(message, dict):
            if initialize:
                self._learn_version(message)
            message = self.stateless.screen(message)
        self._inbox.put(related(message, rid))

    def _learn_version(self, message: JSON) -> None:
        version = agreed_version(message) if self.protocol_version is None else None
        if version is not None:
            self.protocol_version = version
            if not self._listening:
                self._start_listening()

    def _start_listening(self) -> None:
        self._listening = True
        self._tg.start_soon(self._listen)

    async def _listen(self) -> None:
        """The standalone GET stream for server-initiated messages; 405 means the server offers none.

        It is reopened after the server's `retry`, never sooner than `backoff` allows: a stream that
        brought no event and no new id counts as a failure, and waits longer before the next try.
        """
        last_id: str | None = None
        retry, failures = self.retry_ms, 0
        try:
            while failures <= self.reconnect_attempts:
                decoder = SSEDecoder(self.max_message)
                headers = self._headers("text/event-stream")
                if last_id:
                    headers["Last-Event-ID"] = last_id
                try:
                    async with self._get(headers) as r:
                        if r.status_code != 200:
                            return
                        await self._read_events(r, decoder)
                except httpx.TransportError:
                    pass
                failures = 0 if progressed(decoder, last_id) else failures + 1
                last_id = decoder.last_event_id or last_id
                retry = decoder.retry if decoder.retry is not None else retry
                await anyio.sleep(self.backoff.delay(retry, failures))
        finally:
            self._listening = False

    # ---- delivery ------------------------------------------------------------------------------

    def _fail(self, message: JSON, text: str, connection: bool = False) -> None:
        reply = error_reply(message, text, connection)
        if reply is not None:
            self._inbox.put(reply)

    async def aclose(self) -> None:
        if self.legacy is not None:
            await self.legacy.aclose()
        elif self.session_id:
            with anyio.move_on_after(2, shield=True), suppress(httpx.HTTPError):
                await self.http.delete(self.url, headers=self._headers("application/json"))
        self._inbox.end()
