"""`mcpkit auth list` and `mcpkit auth logout URL`: what `--auth oauth` keeps in the CLI's token file
(oauth.FileTokenStore), shown without secrets, and forgotten on request."""

from __future__ import annotations

import argparse
import time
from typing import Any

from .errors import OK, UsageError
from .escape import terminal_line

__all__ = ["add_auth", "run_auth"]


def add_auth(sub: Any) -> None:
    """The `auth` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser(
        "auth", help="list the OAuth logins kept by --auth oauth, or log out of one"
    )
    actions = cmd.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="each server authorized: its issuer, client id and token state")
    logout = actions.add_parser("logout", help="forget the tokens and client kept for a server")
    logout.add_argument("url", help="the server's URL, as given to --auth oauth")
    cmd.set_defaults(run=run_auth)


def _token_state(kept: dict[str, Any]) -> str:
    tokens = kept.get("tokens")
    if not isinstance(tokens, dict):
        return "no token"
    expires = tokens.get("expires_at")
    if not isinstance(expires, int | float):
        return "token (no expiry)"
    left = expires - time.time()
    refresh = ", refreshable" if tokens.get("refresh_token") else ""
    if left <= 0:
        return f"token expired{refresh}"
    return f"token valid {int(left // 60)} min more{refresh}"


def run_auth(args: argparse.Namespace) -> int:
    from .oauth import FileTokenStore, config_dir

    path = config_dir() / "oauth.json"
    if args.action == "list":
        logins = FileTokenStore(path, "").logins()
        if not logins:
            print(f"mcpkit: no logins kept (in {path})")
        for url, issuer, kept in logins:
            client = kept.get("client")
            client_id = client.get("client_id") if isinstance(client, dict) else None
            line = f"{url}  issuer {issuer}  client {client_id or '-'}  {_token_state(kept)}"
            print(terminal_line(line))
        return OK
    forgotten = FileTokenStore(path, args.url).forget()
    if not forgotten:
        raise UsageError(f"no login kept for {args.url} (`mcpkit auth list` shows them)")
    others = [url for url in forgotten if url != args.url]
    also = f"; it was also the login for {', '.join(others)}" if others else ""
    print(terminal_line(f"mcpkit: logged out of {args.url}{also}"))
    return OK
