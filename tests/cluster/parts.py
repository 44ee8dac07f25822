"""Real parts for the scale-out tests: a redis-server, uvicorn worker processes, an haproxy in front.

No mocks: every helper here starts a real process on a free 127.0.0.1 port and is a context manager
that kills it and removes its temporary files when the block ends, also when a test fails. When a
part cannot start, the failure shows the tail of its log; when the block ends with an exception,
the tails of the workers' and haproxy's logs are printed (pytest shows them with the failure).

A missing redis-server or haproxy skips a test on a developer machine but fails it under CI (the
environment variable CI set, as CI systems do): nothing a test needs may be skipped there.

Test modules import these: `from cluster.parts import redis_server, workers, haproxy, cluster`
(tests/ is on sys.path, as for `from peers import ...`; no conftest.py in tests/cluster).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# Debian puts haproxy in /usr/sbin, which a non-root PATH often lacks.
_SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")

__all__ = [
    "Cluster",
    "Proxy",
    "RedisProcess",
    "Workers",
    "cluster",
    "find_binary",
    "free_port",
    "haproxy",
    "in_ci",
    "redis_server",
    "workers",
]


def in_ci() -> bool:
    """True under .ci/run (MCPKIT_CI) or wherever the environment variable CI is set (to anything but
    "", "0", "false" or "no")."""
    flags = (os.environ.get("MCPKIT_CI", ""), os.environ.get("CI", ""))
    return any(flag.strip().lower() not in ("", "0", "false", "no") for flag in flags)


def find_binary(name: str, package: str) -> str:
    """The path of executable `name`; skips the test when missing, or fails it under CI."""
    path = shutil.which(name) or shutil.which(name, path=os.pathsep.join(_SBIN))
    if path is not None:
        return path
    message = f"{name} not installed: install the Debian package {package} (apt-get install {package})"
    if in_ci():
        pytest.fail(f"{message}; CI must not skip it (.ci/run installs it when run as root)")
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _end(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; returns once the process is gone."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- redis -------------------------------------------------------------------------------------


class RedisProcess:
    """A redis-server on 127.0.0.1:`port`; `stop()` and `start()` restart it on the same port."""

    def __init__(self, binary: str, directory: Path, port: int, appendonly: bool) -> None:
        self.binary = binary
        self.directory = directory
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.appendonly = appendonly
        self.log = directory / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def argv(self) -> list[str]:
        durability = (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly else ["--appendonly", "no"]
        )
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            *durability,
            "--dir", str(self.directory),
            "--daemonize", "no",
        ]  # fmt: skip

    def start(self, timeout: float = 10.0) -> None:
        """Start (again) and return once PING answers; fails the test after `timeout` seconds."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError(f"redis-server on port {self.port} is already running")
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                pytest.fail(
                    f"redis-server exited with {self.process.returncode} before answering PING:\n"
                    + _tail(self.log)
                )
            try:
                if self.command("PING") in (True, b"PONG", "PONG"):
                    return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"redis-server did not answer PING within {timeout} s:\n" + _tail(self.log))
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, SIGKILL after 5 s; returns once the process is gone."""
        if self.process is not None:
            _end(self.process)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, *args: Any) -> Any:
        """One synchronous command on a fresh connection (redis-py's sync client)."""
        client = redis.Redis.from_url(self.url, socket_timeout=5, socket_connect_timeout=1)
        try:
            return client.execute_command(*args)  # type: ignore[no-untyped-call]
        finally:
            client.close()


@contextmanager
def redis_server(tmp_dir: Path | str, *, appendonly: bool = False) -> Iterator[RedisProcess]:
    """A redis-server on a free port for the block. `appendonly=True` makes a restart keep the data
    (every write fsynced); otherwise nothing is persisted."""
    binary = find_binary("redis-server", "redis-server")
    directory = Path(tempfile.mkdtemp(prefix="redis-", dir=tmp_dir))
    server = RedisProcess(binary, directory, free_port(), appendonly)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


# ---- uvicorn workers ---------------------------------------------------------------------------


class Workers:
    """n uvicorn processes of one app factory, worker i named w{i+1} (MCPKIT_WORKER_NAME)."""

    def __init__(self, argv: list[list[str]], ports: list[int], envs: list[dict[str, str]], logs: list[Path]):
        self._argv = argv
        self._envs = envs
        self.ports = ports
        self.urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
        self.names = [env["MCPKIT_WORKER_NAME"] for env in envs]
        self.logs = logs
        self.processes: list[subprocess.Popen[bytes]] = []

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def start(self, timeout: float = 30.0) -> None:
        for argv, env, log_path in zip(self._argv, self._envs, self.logs, strict=True):
            with log_path.open("ab") as log:
                self.processes.append(subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout
        for i, port in enumerate(self.ports):
            while not _listening(port):
                process = self.processes[i]
                if process.poll() is not None:
                    pytest.fail(
                        f"worker {self.names[i]} (port {port}) exited with {process.returncode} "
                        f"before listening; its log:\n{_tail(self.logs[i])}"
                    )
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"worker {self.names[i]} did not listen on {port} within {timeout} s; "
                        f"its log:\n{_tail(self.logs[i])}"
                    )
                time.sleep(0.05)

    def kill(self, i: int) -> None:
        """SIGKILL worker i (a crash: no shutdown runs) and wait until it is gone."""
        process = self.processes[i]
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def alive(self, i: int) -> bool:
        return self.processes[i].poll() is None

    def restart(self) -> None:
        """Stop every worker and start them all again, on the same ports."""
        self.stop()
        self.processes = []
        self.start()

    def stop(self) -> None:
        """SIGTERM every worker, SIGKILL whoever is left after 5 s."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 5
        for process in self.processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def report(self) -> str:
        return "\n".join(
            f"--- {name} log ---\n{_tail(log)}" for name, log in zip(self.names, self.logs, strict=True)
        )


@contextmanager
def workers(
    n: int,
    *,
    app: str,
    env: Mapping[str, str] | None = None,
    app_dir: str | Path = HERE,
    tmp_dir: Path | str | None = None,
) -> Iterator[Workers]:
    """n uvicorn workers of the app factory `app` ("module:function", found in `app_dir`), each on a
    free port with this repo's src first on PYTHONPATH, `env` added and MCPKIT_WORKER_NAME=w1, w2, ...
    Returns once every worker accepts TCP connections (uvicorn listens after its lifespan startup)."""
    directory = Path(tempfile.mkdtemp(prefix="workers-", dir=tmp_dir))
    python_path = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)
    ports = [free_port() for _ in range(n)]
    argvs, envs, logs = [], [], []
    for i, port in enumerate(ports):
        uvicorn = ["-m", "uvicorn", "--factory", app, "--app-dir", str(app_dir), "--lifespan", "on"]
        quiet = ["--no-access-log", "--log-level", "warning"]
        argvs.append([sys.executable, *uvicorn, "--host", "127.0.0.1", "--port", str(port), *quiet])
        envs.append(
            {**os.environ, "PYTHONPATH": python_path, **(env or {}), "MCPKIT_WORKER_NAME": f"w{i + 1}"}
        )
        logs.append(directory / f"w{i + 1}.log")
    group = Workers(argvs, ports, envs, logs)
    try:
        group.start()
        yield group
    except BaseException:
        print(group.report(), file=sys.stderr)
        raise
    finally:
        group.stop()
        shutil.rmtree(directory, ignore_errors=True)


# ---- haproxy -----------------------------------------------------------------------------------

# Round-robin per request, no stickiness, streaming responses, and failover to a live worker.
#  - mode http + balance roundrobin: every HTTP request is balanced on its own, also the requests a client
#    sends on one keep-alive connection (haproxy's default http-keep-alive mode picks a server per request;
#    no "option prefer-last-server", no cookie/stick-table: no sticky sessions).
#  - http-reuse is left at its default ("safe"): haproxy picks the server for a request first and only then
#    looks for an idle connection to that server, so reusing server connections does not make a client
#    stick (test_parts checks it: 6 requests on one keep-alive client connection go w1 w2 w3 w1 w2 w3), and
#    neither "option http-server-close" nor "http-reuse never" is needed.
#  - no "option http-buffer-request": a request is forwarded as it arrives; responses are never buffered
#    by haproxy in HTTP mode (SSE events pass as the worker writes them; test_parts checks their timing).
#  - timeouts: connect 2s (a dead worker is noticed quickly); client/server/tunnel 1h because an SSE
#    response (or a GET listen stream) may be idle for a long time between events.
#  - check inter 200 fall 1 rise 1: a TCP check every 200 ms takes a dead worker out after one failure and
#    back after one success.
#  - option redispatch + retries 3 + retry-on conn-failure: a request that cannot reach its worker (a
#    killed worker refuses connections) is sent to another. Not empty-response or response-timeout: those
#    replay a POST that may have run partly on a worker that died, and the session still counts that
#    request id as in flight (the client resumes its stream with Last-Event-ID instead).
_HAPROXY_CFG = """\
global
    maxconn 1024
    stats socket {stats} mode 600 level admin

defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-keep-alive 10s
    timeout check 1s
    option redispatch
    retries 3
    retry-on conn-failure

frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers

backend workers
    balance roundrobin
{servers}
"""


@dataclass
class Proxy:
    port: int
    url: str
    config: Path
    log: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        _end(self.process)

    def alive(self) -> bool:
        return self.process.poll() is None

    def admin(self, command: str) -> str:
        """One command on haproxy's stats socket (e.g. "show stat", "disable server workers/w1")."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.config.parent / "stats.sock"))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def servers(self) -> dict[str, dict[str, str]]:
        """The backend's servers by name (w1, w2, ...): haproxy's `show stat` fields, e.g. "status"
        (UP/DOWN), "stot" (requests sent), "wretr" (retries), "wredis" (redispatches)."""
        lines = self.admin("show stat").splitlines()
        names = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(names, line.split(","), strict=False)) for line in lines[1:] if line]
        return {
            row["svname"]: row for row in rows if row["pxname"] == "workers" and row["svname"] != "BACKEND"
        }


def haproxy_config(port: int, ports: Sequence[int], stats: Path | str) -> str:
    servers = "\n".join(
        f"    server w{i + 1} 127.0.0.1:{p} check inter 200 fall 1 rise 1" for i, p in enumerate(ports)
    )
    return _HAPROXY_CFG.format(port=port, servers=servers, stats=stats)


@contextmanager
def haproxy(
    ports: Sequence[int], tmp_dir: Path | str | None = None, timeout: float = 10.0
) -> Iterator[Proxy]:
    """haproxy in the foreground (-db) on a free port, round-robin over 127.0.0.1:`ports` (the servers are
    named w1, w2, ... like the workers). The config is checked first (haproxy -c)."""
    binary = find_binary("haproxy", "haproxy")
    directory = Path(tempfile.mkdtemp(prefix="haproxy-", dir=tmp_dir))
    port = free_port()
    config = directory / "haproxy.cfg"
    config.write_text(haproxy_config(port, ports, directory / "stats.sock"))
    log = directory / "haproxy.log"
    try:
        checked = subprocess.run([binary, "-c", "-f", str(config)], capture_output=True, timeout=30)
        if checked.returncode != 0:
            pytest.fail(
                f"haproxy refused its config:\n{(checked.stdout + checked.stderr).decode(errors='replace')}"
            )
        with log.open("ab") as out:
            process = subprocess.Popen(
                [binary, "-f", str(config), "-db"], stdout=out, stderr=subprocess.STDOUT
            )
        proxy = Proxy(port, f"http://127.0.0.1:{port}/mcp", config, log, process)
        try:
            deadline = time.monotonic() + timeout
            while not _listening(port):
                if process.poll() is not None:
                    pytest.fail(f"haproxy exited with {process.returncode} before listening:\n{_tail(log)}")
                if time.monotonic() > deadline:
                    pytest.fail(f"haproxy did not listen on {port} within {timeout} s:\n{_tail(log)}")
                time.sleep(0.05)
            yield proxy
        except BaseException:
            print(f"--- haproxy log ---\n{_tail(log)}", file=sys.stderr)
            raise
        finally:
            proxy.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# ---- all together ------------------------------------------------------------------------------


@dataclass
class Cluster:
    workers: Workers
    proxy: Proxy

    @property
    def url(self) -> str:
        return self.proxy.url


@contextmanager
def cluster(
    n: int,
    *,
    app: str = "cluster_app:build",
    env: Mapping[str, str] | None = None,
    app_dir: str | Path = HERE,
    tmp_dir: Path | str | None = None,
) -> Iterator[Cluster]:
    """n workers of `app` (default: tests/cluster/cluster_app.py) behind one haproxy."""
    with (
        workers(n, app=app, env=env, app_dir=app_dir, tmp_dir=tmp_dir) as group,
        haproxy(group.ports, tmp_dir) as proxy,
    ):
        yield Cluster(group, proxy)
