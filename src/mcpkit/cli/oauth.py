"""`--auth oauth`: the library's OAuthClient, the user's browser for the authorization, a loopback
listener for the redirect (RFC 8252 §7.3), and the tokens kept in a file only the user can read.

The file is $XDG_CONFIG_HOME/mcpkit/oauth.json (default ~/.config/mcpkit/oauth.json), mode 0600 in a 0700
directory: per issuer, the tokens and the client registered there; per server URL, its issuer, so the
next run sends the kept token at once instead of starting from a 401.
"""

from __future__ import annotations

import os
import sys
import webbrowser
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import orjson
from anyio.abc import SocketStream

from ..client.oauth import ClientCredentials, ClientMetadata, OAuthClient, Tokens
from .escape import terminal_line

__all__ = ["FileTokenStore", "config_dir", "loopback_login", "oauth_client"]

CALLBACK_PORT = 8976  # the redirect URI ClientMetadata registers: http://127.0.0.1:8976/callback
LOGIN_TIMEOUT = 300.0  # seconds the person has to finish in the browser
_MAX_REQUEST = 16384
_DONE_PAGE = b"<!doctype html><title>mcpkit</title><p>Authorized. You can close this tab."


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mcpkit"


class FileTokenStore:
    """A TokenStore in a JSON file only its owner can read or write."""

    def __init__(self, path: Path, server_url: str) -> None:
        self.path, self.server_url = path, server_url

    def _read(self) -> dict[str, Any]:
        try:
            data = orjson.loads(self.path.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            data = {}
        if not isinstance(data, dict):
            data = {}
        data.setdefault("servers", {})
        data.setdefault("issuers", {})
        return data

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        part = self.path.with_name(self.path.name + ".part")
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o600)  # a part file left by another umask is narrowed too
            out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        os.replace(part, self.path)

    def logins(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(server URL, issuer, what is kept for that issuer) for each server authorized before."""
        data = self._read()
        found = []
        for url, issuer in sorted(data["servers"].items()):
            kept = data["issuers"].get(issuer) if isinstance(issuer, str) else None
            found.append((url, str(issuer), kept if isinstance(kept, dict) else {}))
        return found

    def forget(self) -> list[str]:
        """Drop this server's issuer: its tokens and client, and every server URL that used it (tokens
        are kept per issuer). Returns those URLs; [] when nothing was kept for this server."""
        data = self._read()
        issuer = data["servers"].get(self.server_url)
        if not isinstance(issuer, str):
            return []
        data["issuers"].pop(issuer, None)
        urls = sorted(url for url, kept in data["servers"].items() if kept == issuer)
        for url in urls:
            del data["servers"][url]
        self._write(data)
        return urls

    def issuer(self) -> str | None:
        found = self._read()["servers"].get(self.server_url)
        return found if isinstance(found, str) else None

    def _entry(self, issuer: str, key: str) -> dict[str, Any] | None:
        found = self._read()["issuers"].get(issuer, {}).get(key)
        return found if isinstance(found, dict) else None

    def _set(self, issuer: str, key: str, value: dict[str, Any] | None) -> None:
        data = self._read()
        entry = data["issuers"].setdefault(issuer, {})
        if value is None:
            entry.pop(key, None)
        else:
            entry[key] = value
            data["servers"][self.server_url] = issuer
        self._write(data)

    async def get_tokens(self, issuer: str) -> Tokens | None:
        found = self._entry(issuer, "tokens")
        try:
            return Tokens(**found) if found else None
        except TypeError:  # a file from another version: authorize again
            return None

    async def set_tokens(self, issuer: str, tokens: Tokens | None) -> None:
        self._set(issuer, "tokens", asdict(tokens) if tokens else None)

    def kept_client(self, issuer: str) -> ClientCredentials | None:
        found = self._entry(issuer, "client")
        try:
            return ClientCredentials(**found) if found else None
        except TypeError:
            return None

    async def get_client(self, issuer: str) -> ClientCredentials | None:
        return self.kept_client(issuer)

    async def set_client(self, issuer: str, client: ClientCredentials | None) -> None:
        self._set(issuer, "client", asdict(client) if client else None)


async def loopback_login(url: str, port: int = CALLBACK_PORT) -> str:
    """Open `url` in the browser and wait for the authorization server's redirect to
    http://127.0.0.1:`port`/callback; returns that redirect URL."""
    arrived: list[str] = []
    done = anyio.Event()

    async def handle(stream: SocketStream) -> None:
        async with stream:
            head = b""
            with anyio.move_on_after(10):
                while b"\r\n" not in head and len(head) < _MAX_REQUEST:
                    head += await stream.receive()
            words = head.split(b"\r\n", 1)[0].split()
            target = words[1].decode(errors="replace") if len(words) == 3 else ""
            if urlsplit(target).path != "/callback":
                await stream.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            size = str(len(_DONE_PAGE)).encode()
            await stream.send(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                + size
                + b"\r\nConnection: close\r\n\r\n"
                + _DONE_PAGE
            )
            arrived.append(f"http://127.0.0.1:{port}{target}")
            done.set()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    print(
        f"mcpkit: authorize in the browser; if none opens, visit:\n  {terminal_line(url)}",
        file=sys.stderr,
        flush=True,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        tg.start_soon(_open_browser, url)
        with anyio.fail_after(LOGIN_TIMEOUT):
            await done.wait()
        tg.cancel_scope.cancel()
    return arrived[0]


async def _open_browser(url: str) -> None:
    # webbrowser.open may wait for the browser command to exit: a thread keeps the listener serving
    await anyio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)


def oauth_client(server_url: str, client_id: str | None, client_secret: str | None) -> OAuthClient:
    """An OAuthClient for the CLI: the browser, the loopback redirect, tokens in the config dir."""
    store = FileTokenStore(config_dir() / "oauth.json", server_url)
    client = ClientCredentials(client_id, client_secret) if client_id else None
    issuer = store.issuer()
    if client is not None and issuer is not None and store.kept_client(issuer) != client:
        store.forget()  # tokens issued to the client kept before are not this client's
    metadata = ClientMetadata(redirect_uris=[f"http://127.0.0.1:{CALLBACK_PORT}/callback"])
    # dpop=False: a DPoP key lives in this process only, and a token kept for the next run must still work
    auth = OAuthClient(
        server_url,
        user_agent=loopback_login,
        client=client,
        client_metadata=metadata,
        store=store,
        dpop=False,
    )
    auth.issuer = store.issuer()  # the kept token goes out with the first request
    return auth
