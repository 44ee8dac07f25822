"""A client ID metadata document is a stranger's URL that mcpkit's authorization server fetches: it is
refused, unfetched, when its host resolves to the server's own network (loopback, private, link-local ...,
an IPv4-mapped IPv6 address included), unless the server was told to allow that (development, tests);
and a redirect is never followed, wherever it points."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import identity_harness
import orjson
import pytest
from identity_harness import CLIENT_REDIRECT, ISSUER, BrowserSession, Request, running_proxy

import peers
from cluster.tls_redis import self_signed
from mcpkit.transports.http_server.asgi import respond

upstream = identity_harness.upstream
browser = identity_harness.browser
pytestmark = pytest.mark.anyio


class DocumentHost:
    """A web server on 127.0.0.1 that serves a client's metadata document (or a redirect), and records
    the Host of each request it is asked."""

    def __init__(self, client_id: str = "", redirect_to: str | None = None) -> None:
        self.client_id = client_id
        self.redirect_to = redirect_to
        self.hosts: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.hosts.append(dict(scope["headers"])[b"host"].decode())
        if self.redirect_to is not None:
            await respond(send, 302, b"", [(b"location", self.redirect_to.encode())])
            return
        document = {
            "client_id": self.client_id,
            "client_name": "Document Client",
            "redirect_uris": [CLIENT_REDIRECT],
            "token_endpoint_auth_method": "none",
        }
        await respond(send, 200, orjson.dumps(document), [(b"content-type", b"application/json")])


@asynccontextmanager
async def hosting(
    document: DocumentHost, port: int, tls: tuple[str, str] | None = None
) -> AsyncIterator[None]:
    async with peers.serving(document, port=port, tls=tls):
        yield


@pytest.mark.parametrize(
    ("host", "address"),
    [("localhost", "127.0.0.1"), ("127.0.0.1", "127.0.0.1"), ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1")],
    ids=["a-name-for-loopback", "a-loopback-address", "an-ipv4-mapped-ipv6-address"],
)
async def test_a_metadata_document_on_the_servers_own_network_is_refused_unfetched_by_default(
    upstream: str, browser: BrowserSession, host: str, address: str
) -> None:
    port = peers.free_port()
    client_id = f"http://{host}:{port}/client.json"
    document = DocumentHost(client_id)
    async with running_proxy(upstream, allow_private_client_ids=False), hosting(document, port):
        page = await browser.consent_page(Request(client_id))
        token = await browser.http.post(
            f"{ISSUER}/token",
            data={
                "grant_type": "authorization_code",
                "code": "x",
                "client_id": client_id,
                "code_verifier": "v",
            },
        )
    said = f"the client's metadata document at {host.strip('[]')} is not fetched: {address} is not a public"
    assert page.status_code == 400 and "location" not in page.headers
    assert "Unknown application" in page.text and said in unescape(page.text)
    assert token.status_code == 400 and token.json()["error"] == "invalid_client"
    assert token.json()["error_description"].startswith(said)
    assert document.hosts == []  # never asked


async def test_with_private_client_ids_allowed_a_name_for_loopback_is_fetched_at_its_checked_address(
    upstream: str, browser: BrowserSession
) -> None:
    port = peers.free_port()
    client_id = f"http://localhost:{port}/client.json"
    document = DocumentHost(client_id)
    async with running_proxy(upstream, allow_private_client_ids=True), hosting(document, port):
        page = await browser.consent_page(Request(client_id))
    assert page.status_code == 200 and "Document Client" in page.text
    assert document.hosts == [f"localhost:{port}"]  # sent to the resolved address, named by its Host


async def test_a_redirect_from_a_metadata_document_url_is_not_followed(
    upstream: str, browser: BrowserSession
) -> None:
    here, there = peers.free_port(), peers.free_port()
    client_id = f"http://127.0.0.1:{here}/client.json"
    target = DocumentHost(client_id)  # would be a valid document for the client, if it were reached
    redirecting = DocumentHost(redirect_to=f"http://127.0.0.1:{there}/client.json")
    follows = httpx.AsyncClient(follow_redirects=True)  # even a client that follows redirects
    proxy = running_proxy(upstream, allow_private_client_ids=True, http_client=follows)
    async with proxy, hosting(redirecting, here), hosting(target, there):
        page = await browser.consent_page(Request(client_id))
    assert page.status_code == 400 and "The client_id is not known here." in page.text
    assert redirecting.hosts == [f"127.0.0.1:{here}"] and target.hosts == []


async def test_over_https_the_checked_address_is_asked_and_its_certificate_must_name_the_documents_host(
    upstream: str, browser: BrowserSession, tmp_path: Path
) -> None:
    certificate, key = self_signed(tmp_path, "localhost")  # for the name only, not for 127.0.0.1
    port = peers.free_port()
    by_name, by_address = f"https://localhost:{port}/client.json", f"https://127.0.0.1:{port}/client.json"
    document = DocumentHost(by_name)
    trusting = httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(certificate)))
    proxy = running_proxy(upstream, allow_private_client_ids=True, http_client=trusting)
    async with proxy, hosting(document, port, (str(certificate), str(key))):
        named = await browser.consent_page(Request(by_name))
        document.client_id = by_address  # the same server, asked for by its address: not what it proves
        addressed = await browser.consent_page(Request(by_address))
    assert named.status_code == 200 and "Document Client" in named.text
    assert addressed.status_code == 400 and "The client_id is not known here." in addressed.text
    assert document.hosts == [
        f"localhost:{port}"
    ]  # the second never got past TLS, on a connection of its own
