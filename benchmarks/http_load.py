# ruff: noqa: RUF001
"""Streamable HTTP workloads: a raw-asyncio-socket load generator against a server in another process.

The client speaks HTTP/1.1 keep-alive by hand (one connection per MCP session, no HTTP library), so its
own cost stays far below the servers'; `client_cpu` in the results says how busy it was. Every response
is verified: status, the JSON-RPC id, and the `add` result (from the JSON body or the SSE event).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
from _checks import BenchError, check_add, result_of
from launchers import SCRIPTS, interpreter

HERE = Path(__file__).resolve().parent
APP = HERE / "servers" / "http_app.py"
PROTOCOL = "2025-06-18"
KINDS = [
    "baseline",
    "mcpkit-json",
    "mcpkit-sse",
    "sdk-json",
    "sdk-sse",
    "ts-json",
    "ts-sse",
    "fastmcp-json",
    "fastmcp-sse",
]
CONCURRENCY = (1, 16, 64)


class HTTPConn:
    """One keep-alive HTTP/1.1 connection carrying one MCP session."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.session_id: str | None = None
        self.next_id = 0
        self._head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
        ).encode()

    async def open(self) -> None:
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        self.w.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def post(self, msg: dict[str, Any]) -> tuple[int, dict[bytes, bytes], bytes]:
        body = orjson.dumps(msg)
        extra = b""
        if self.session_id is not None:
            extra = f"Mcp-Session-Id: {self.session_id}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n".encode()
        self.w.write(self._head + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return await self._response()

    async def _response(self) -> tuple[int, dict[bytes, bytes], bytes]:
        head = await self.r.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(b":")
                headers[k.strip().lower()] = v.strip()
        if headers.get(b"transfer-encoding") == b"chunked":
            return status, headers, await self._chunked()
        return status, headers, await self.r.readexactly(int(headers.get(b"content-length", b"0")))

    async def _chunked(self) -> bytes:
        parts = []
        while True:
            size = int((await self.r.readuntil(b"\r\n")).split(b";")[0], 16)
            data = await self.r.readexactly(size + 2)
            if size == 0:
                return b"".join(parts)
            parts.append(data[:-2])

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        status, headers, body = await self.post(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        )
        if status != 200:
            raise BenchError(f"{method}: HTTP {status}: {body[:200]!r}")
        return result_of(_message(headers, body, rid), rid)

    async def initialize(self) -> None:
        params = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": "initialize", "params": params}
        status, headers, body = await self.post(msg)
        sid = headers.get(b"mcp-session-id")
        if status != 200 or sid is None:
            raise BenchError(f"initialize: HTTP {status}, session id {sid!r}: {body[:200]!r}")
        res = result_of(_message(headers, body, self.next_id), self.next_id)
        if "serverInfo" not in res:
            raise BenchError(f"initialize: bad result {res!r}")
        self.session_id = sid.decode()
        status, _, body = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise BenchError(f"notifications/initialized: HTTP {status}: {body[:200]!r}")

    def close(self) -> None:
        self.w.close()


def _message(headers: dict[bytes, bytes], body: bytes, rid: int) -> dict[str, Any]:
    """The JSON-RPC response in a JSON body or among the events of an SSE body."""
    if not headers.get(b"content-type", b"").startswith(b"text/event-stream"):
        return orjson.loads(body)  # type: ignore[no-any-return]
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
        if data:
            msg = orjson.loads(data)
            if msg.get("id") == rid and "method" not in msg:
                return msg  # type: ignore[no-any-return]
    raise BenchError(f"no response to id {rid} in the SSE body {body[:200]!r}")


async def _session_loop(port: int, calls: int, base: int, lat: list[float]) -> None:
    conn = HTTPConn(port)
    await conn.open()
    try:
        await conn.initialize()
        pc = time.perf_counter
        for i in range(base, base + calls):
            t0 = pc()
            res = await conn.call("tools/call", {"name": "add", "arguments": {"a": i, "b": 2 * i + 1}})
            lat.append(pc() - t0)
            check_add(res, 3 * i + 1)
    finally:
        conn.close()


async def concurrent_calls(port: int, sessions: int, calls: int) -> tuple[float, float, float]:
    """(calls/s, p99 ms, client CPU share) for `calls` tools/call spread over `sessions` sessions."""
    per = max(1, calls // sessions)
    warm: list[float] = []
    await asyncio.gather(*(_session_loop(port, 5, s * 10, warm) for s in range(sessions)))
    lat: list[float] = []
    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(_session_loop(port, per, s * per, lat) for s in range(sessions)))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    lat.sort()
    return len(lat) / wall, lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3, cpu / wall


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise BenchError("no VmRSS in /proc status")


async def idle_session_kib(port: int, pid: int, n: int) -> float:
    """Server RSS growth per session after opening `n` sessions (initialize + initialized) left idle."""
    conns = [HTTPConn(port) for _ in range(16)]
    for c in conns:
        await c.open()
    await _open_sessions(conns, 32)  # warm the allocator and the code paths first
    await asyncio.sleep(0.3)
    before = _rss_kib(pid)
    await _open_sessions(conns, n)
    await asyncio.sleep(0.5)
    after = _rss_kib(pid)
    for c in conns:
        c.close()
    return (after - before) / n


async def _open_sessions(conns: list[HTTPConn], n: int) -> None:
    async def worker(c: HTTPConn, count: int) -> None:
        for _ in range(count):
            c.session_id = None  # a fresh session on the same connection
            await c.initialize()

    share = [n // len(conns) + (1 if i < n % len(conns) else 0) for i in range(len(conns))]
    await asyncio.gather(*(worker(c, k) for c, k in zip(conns, share, strict=True)))


# ---- one server process ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HTTPServer:
    """`servers/http_app.py KIND PORT` (`servers/ts_server.mjs KIND PORT` for the TypeScript SDK) in a child
    process, ready once its port accepts."""

    def __init__(self, kind: str, repo_root: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(repo_root / "src")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached (see run.py)
        self.port = _free_port()
        impl = kind.split("-")[0]
        self.proc = subprocess.Popen(
            [*interpreter(impl), str(SCRIPTS["ts"] if impl == "ts" else APP), kind, str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(repo_root),
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise BenchError(f"{kind} HTTP server exited: {err[-500:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return
            time.sleep(0.05)
        raise BenchError(f"{kind} HTTP server did not listen within 30 s")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench_http(kind: str, repo_root: Path, calls: int, idle: int) -> dict[str, float]:
    """Every HTTP figure for one server kind, each concurrency in a fresh server process."""
    r: dict[str, float] = {}
    for c in CONCURRENCY:
        server = HTTPServer(kind, repo_root)
        try:
            cps, p99, cpu = asyncio.run(concurrent_calls(server.port, c, calls))
        finally:
            server.close()
        r[f"http_c{c}_cps"], r[f"http_c{c}_p99_ms"], r[f"http_c{c}_client_cpu"] = cps, p99, cpu
    if idle and not kind.endswith("-sse"):
        server = HTTPServer(kind, repo_root)
        try:
            r["http_idle_kib"] = asyncio.run(idle_session_kib(server.port, server.proc.pid, idle))
        finally:
            server.close()
    return r


# ---- report --------------------------------------------------------------------------------------

# (impl kind, what its ratio is taken against)
COLUMNS = [
    ("mcpkit-json", "baseline"),
    ("mcpkit-sse", "mcpkit-json"),
    ("sdk-json", "baseline"),
    ("sdk-sse", "sdk-json"),
    ("ts-json", "baseline"),
    ("ts-sse", "ts-json"),
    ("fastmcp-json", "baseline"),
    ("fastmcp-sse", "fastmcp-json"),
]
TARGETS = {
    ("mcpkit-json", 1): 1.2,
    ("mcpkit-json", 64): 1.3,
    ("mcpkit-sse", 1): 1.1,
    ("mcpkit-sse", 16): 1.1,
    ("mcpkit-sse", 64): 1.1,
}
IDLE_TARGET_KIB = 10.0


def http_table(results: dict[str, dict[str, float]]) -> str:
    """Markdown: calls/s and p99 per concurrency, each cost ratio against the column it names."""
    cols = [(k, ref) for k, ref in COLUMNS if k in results]
    head = ["HTTP metric"]
    if "baseline" in results:
        head.append("baseline")
    for k, ref in cols:
        head += [k, f"÷ {ref}"]
    head.append("mcpkit target")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for c in CONCURRENCY:
        for key, label, hib in (
            (f"http_c{c}_cps", f"tools/call, C={c} (calls/s)", True),
            (f"http_c{c}_p99_ms", f"tools/call, C={c}, p99 (ms)", False),
        ):
            lines.append(_row(results, cols, key, label, hib, c))
    if any("http_idle_kib" in r for r in results.values()):
        lines.append(_idle_row(results, cols))
    return "\n".join(lines)


def _ratio(results: dict[str, dict[str, float]], kind: str, ref: str, key: str, hib: bool) -> float | None:
    if ref not in results or key not in results[kind] or key not in results[ref]:
        return None
    v, b = results[kind][key], results[ref][key]
    return b / v if hib else v / b


def _row(
    results: dict[str, dict[str, float]], cols: list[tuple[str, str]], key: str, label: str, hib: bool, c: int
) -> str:
    fmt = "{:.0f}" if hib else "{:.2f}"
    row = [label]
    if "baseline" in results:
        row.append(fmt.format(results["baseline"][key]))
    for k, ref in cols:
        ratio = _ratio(results, k, ref, key, hib)
        row += [fmt.format(results[k][key]), "" if ratio is None else f"{ratio:.2f}×"]
    targets = []
    for k in ("mcpkit-json", "mcpkit-sse"):
        target = TARGETS.get((k, c)) if hib else None
        ratio = _ratio(results, k, dict(COLUMNS)[k], key, hib) if k in results else None
        if target is not None and ratio is not None:
            targets.append(f"{k.split('-')[1]} ≤ {target}× {'✓' if ratio <= target else '✗'}")
    row.append(", ".join(targets))
    return "| " + " | ".join(row) + " |"


def _idle_row(results: dict[str, dict[str, float]], cols: list[tuple[str, str]]) -> str:
    row = ["memory per idle session (KiB)"]
    if "baseline" in results:
        row.append(f"{results['baseline'].get('http_idle_kib', float('nan')):.1f}")
    for k, _ in cols:
        v = results[k].get("http_idle_kib")
        row += ["" if v is None else f"{v:.1f}", ""]
    v = results.get("mcpkit-json", {}).get("http_idle_kib")
    row.append("" if v is None else f"≤ {IDLE_TARGET_KIB:.0f} KiB {'✓' if v <= IDLE_TARGET_KIB else '✗'}")
    return "| " + " | ".join(row) + " |"
