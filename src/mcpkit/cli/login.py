"""`mcpkit serve FILE --http --login-issuer URL --login-client-id ID`: the MCP endpoint behind mcpkit's own
authorization server (mcpkit.auth.identity), which signs users in at an upstream OAuth 2.0 / OpenID Connect
provider with the client registered there. The options are checked and the provider discovered once, before
any worker starts; the workers get the settings, never the client secret (its file, or the environment).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import hmac
import os
from typing import Any, Final
from urllib.parse import urlsplit

from .errors import UsageError

__all__ = ["SECRET_ENV", "add_login", "login_server", "login_settings"]

SECRET_ENV: Final = "MCPKIT_LOGIN_CLIENT_SECRET"
OPTIONS: Final = (
    "login_issuer",
    "login_authorization_endpoint",
    "login_token_endpoint",
    "login_userinfo_endpoint",
    "login_client_id",
    "login_client_secret_file",
    "login_scopes",
    "login_subject_claim",
    "login_auth_method",
    "login_token_scopes",
    "login_name",
)
_ENDPOINTS: Final = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint")
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")
# The upstream tokens are sealed under a key derived from the run's requestState key (shared by the workers,
# and by machines given the same --state-key-file or Redis), never under that key itself.
_KEY_LABEL: Final = b"mcpkit login: sealing the provider's tokens"


def add_login(serve: argparse.ArgumentParser) -> None:
    """The `--login-*` options of `mcpkit serve`."""
    login = serve.add_argument_group(
        "with --http: sign users in at an OAuth 2.0 / OpenID Connect provider (pip install 'mcpkit[oauth]')"
    )
    login.add_argument(
        "--login-issuer", metavar="URL", help="the provider's issuer, its endpoints discovered"
    )
    for name in _ENDPOINTS:
        login.add_argument(
            f"--login-{name.replace('_', '-')}",
            metavar="URL",
            help=f"the provider's {name.replace('_', ' ')}, for a provider without discovery (GitHub)",
        )
    login.add_argument("--login-client-id", metavar="ID", help="the client registered at the provider")
    login.add_argument(
        "--login-client-secret-file",
        metavar="PATH",
        help=f"a file holding that client's secret (else ${SECRET_ENV})",
    )
    login.add_argument(
        "--login-scopes",
        metavar="SCOPES",
        help="the scopes asked of the provider, space-separated (default: openid with --login-issuer)",
    )
    login.add_argument(
        "--login-subject-claim",
        metavar="CLAIM",
        help="the userinfo claim that names the user (default sub; GitHub: id)",
    )
    login.add_argument(
        "--login-auth-method",
        choices=("client_secret_basic", "client_secret_post"),
        help="how the client authenticates at the token endpoint (default: basic, or what discovery says)",
    )
    login.add_argument(
        "--login-name",
        metavar="NAME",
        help="the provider's name on the consent page (default: its issuer, or its authorization host)",
    )
    login.add_argument(
        "--login-token-scopes",
        metavar="SCOPES",
        help="the scopes the tokens mcpkit issues may grant, space-separated (default mcp)",
    )


def login_settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """None without --login-* options; else the checked settings every worker builds its authorization
    server from (the provider discovered here). A configuration that cannot work is a UsageError."""
    if not any(getattr(args, name) for name in OPTIONS):
        return None
    if not args.login_client_id:
        raise UsageError("--login-* needs --login-client-id ID: the client registered at the provider")
    secret_file = args.login_client_secret_file
    resource = args.public_url or f"http://{args.host}:{args.port}/mcp"
    issuer = _issuer(resource)
    upstream = _upstream(args, read_secret(secret_file))
    public = {k: v for k, v in dataclasses.asdict(upstream).items() if k != "client_secret"}
    return {
        "upstream": public,
        "secret_file": secret_file,
        "issuer": issuer,
        "resource": resource,
        "scopes": _words(args.login_token_scopes) or ["mcp"],
    }


def read_secret(path: str | None) -> str:
    """The client secret, from `path` (its first line) or the environment; UsageError without one."""
    if path is None:
        secret = os.environ.get(SECRET_ENV, "").strip()
        if not secret:
            raise UsageError(
                f"--login-* needs the client secret: --login-client-secret-file PATH or ${SECRET_ENV}"
            )
        return secret
    try:
        with open(path, encoding="utf-8") as file:
            secret = file.readline().strip()
    except OSError as exc:
        raise UsageError(f"--login-client-secret-file {path}: {exc.strerror or exc}") from None
    if not secret:
        raise UsageError(f"--login-client-secret-file {path}: the file is empty")
    return secret


def _issuer(resource: str) -> str:
    """The authorization server's issuer: the origin of the MCP endpoint's public URL, which OAuth 2.1
    wants on https (http only on loopback)."""
    url = urlsplit(resource)
    if url.scheme == "http" and url.hostname not in _LOOPBACK:
        raise UsageError(
            f"--login-* needs an https URL for the server ({resource} is not): give --public-url https://..."
        )
    return f"{url.scheme}://{url.netloc}"


def _words(value: str | None) -> list[str]:
    return (value or "").replace(",", " ").split()


def _checked_url(option: str, url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--{option.replace('_', '-')} {url!r} is not an http(s) URL with a host")
    return url


def _upstream(args: argparse.Namespace, secret: str) -> Any:
    """The provider from --login-issuer (discovered now) or from its endpoints."""
    from ..auth.identity import Upstream

    endpoints = {name: getattr(args, f"login_{name}") for name in _ENDPOINTS}
    for name, url in endpoints.items():
        if url is not None:
            _checked_url(f"login_{name}", url)
    if args.login_issuer is not None:
        if any(endpoints.values()):
            raise UsageError("--login-issuer or --login-*-endpoint: give one way to find the provider")
        found = _discover(_checked_url("login_issuer", args.login_issuer), args, secret)
    elif endpoints["authorization_endpoint"] and endpoints["token_endpoint"]:
        host = urlsplit(endpoints["authorization_endpoint"]).hostname
        found = Upstream(args.login_client_id, secret, **endpoints, name=host or "the identity provider")
    else:
        raise UsageError(
            "--login-* needs --login-issuer URL, or --login-authorization-endpoint and --login-token-endpoint"
        )
    method = args.login_auth_method or found.auth_method
    scopes = tuple(_words(args.login_scopes)) or found.scopes
    return dataclasses.replace(
        found,
        scopes=scopes,
        auth_method=method,
        subject_claim=args.login_subject_claim or found.subject_claim,
        name=args.login_name or found.name,
    )


def _discover(issuer: str, args: argparse.Namespace, secret: str) -> Any:
    import anyio

    from ..auth.identity import Upstream
    from ..auth.verifier import VerifierUnavailable

    async def discover() -> Upstream:
        return await Upstream.discover(issuer, args.login_client_id, secret)

    try:
        return anyio.run(discover)
    except VerifierUnavailable as exc:
        raise UsageError(f"--login-issuer {issuer}: {exc}") from None
    except KeyError as exc:
        raise UsageError(f"--login-issuer {issuer}: its metadata has no {exc.args[0]}") from None


def login_server(settings: dict[str, Any], state_key: bytes | None, redis: Any = None) -> Any:
    """The AuthorizationServer of `settings` (login_settings), its store in `redis` when given (a client
    shared by the workers), else in memory; its tokens sealed under a key derived from `state_key`."""
    from ..auth.identity import AuthorizationServer, Upstream

    secret = read_secret(settings["secret_file"])
    public = {**settings["upstream"], "scopes": tuple(settings["upstream"]["scopes"])}
    key = hmac.new(state_key, _KEY_LABEL, hashlib.sha256).digest() if state_key else None
    store = None
    if redis is not None:
        from ..cluster import RedisIdentityStore

        store = RedisIdentityStore(redis)
    return AuthorizationServer(
        issuer=settings["issuer"],
        resource=settings["resource"],
        upstream=Upstream(**public, client_secret=secret),
        scopes=settings["scopes"],
        secret_key=key,
        store=store,
    )
