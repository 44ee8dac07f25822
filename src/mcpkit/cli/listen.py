"""`mcpkit serve --http` and `mcpkit proxy --http`: the listening socket bound before anything is said, so
"serving on ..." is printed only once the address is ours, and a port in use is one line, not a log."""

from __future__ import annotations

import errno
import socket
import sys
from argparse import ArgumentTypeError
from typing import Any

from .errors import Failure

__all__ = ["bind", "port_number", "run_uvicorn", "seconds"]

BACKLOG = 2048  # uvicorn's default


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1-65535."""
    try:
        port = int(text)
    except ValueError:
        raise ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise ArgumentTypeError(f"{port} is not a TCP port (1-65535)")
    return port


def seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket listening on host:port; Failure with one line when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if sys.platform != "win32":  # elsewhere SO_REUSEADDR lets a second server take a port in use
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        why = {
            errno.EADDRINUSE: "the port is in use: stop what is there, or pick another --port",
            errno.EACCES: "not allowed (ports below 1024 need privileges)",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        raise Failure(f"cannot listen on {host}:{port}: {why}") from None
    sock.listen(BACKLOG)  # connections made once "serving on" is printed wait for uvicorn, not refused
    return sock


def run_uvicorn(app: Any, sock: socket.socket, log_level: str | None, **options: Any) -> None:
    """Serve `app` on the bound `sock` until interrupted (`options`: uvicorn's). uvicorn's own start and
    stop lines stay quiet below --log-level info: mcpkit has said where it serves."""
    import uvicorn

    config = uvicorn.Config(app, lifespan="on", log_level=log_level or "warning", **options)
    uvicorn.Server(config).run(sockets=[sock])
