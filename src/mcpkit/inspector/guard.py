"""Who may use the inspector: a page on this machine that knows the token.

The MCP Inspector's proxy once ran any command for any web page (CVE-2025-49596). Here every request
must name this server as its Host (a DNS-rebinding page names its own), any Origin must be this server
(no CORS, ever), and everything but the static files needs the token printed on the terminal.
"""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs

__all__ = ["Guard"]

# the page's own files, which hold nothing secret; the page itself (/) needs the token in its URL
_OPEN_PREFIX = "/static/"


class Guard:
    """The checks for a server on 127.0.0.1:`port` with `token`."""

    def __init__(self, port: int, token: str) -> None:
        self.token = token
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def refusal(self, method: str, path: str, query: bytes, headers: dict[str, str]) -> str | None:
        """Why the request is refused (a sentence for the 403), or None to let it through."""
        if headers.get("host", "").lower() not in self.hosts:
            return "this inspector answers only at 127.0.0.1 or localhost on its own port"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return "requests from another origin are refused"
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return "cross-site requests are refused"
        if method == "GET" and path.startswith(_OPEN_PREFIX):
            return None
        if not self.has_token(query, headers):
            return "the token is missing or wrong: open the URL the inspector printed"
        if method == "POST" and headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return "requests must be application/json"  # a cross-origin form cannot send that unasked
        return None

    def has_token(self, query: bytes, headers: dict[str, str]) -> bool:
        given = ""
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer":
            given = value.strip()
        else:
            given = parse_qs(query.decode("latin-1")).get("token", [""])[0]
        return hmac.compare_digest(given.encode(), self.token.encode())
