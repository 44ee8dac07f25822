#!/usr/bin/env python3
# ruff: noqa: RUF001
"""MCP stdio benchmark harness: raw JSON-RPC over a server's stdin/stdout, no MCP library.

Drives mcpkit, the official SDK, the TypeScript SDK, fastmcp and two raw-orjson baselines (a blocking loop
and an asyncio one) in one run and prints a markdown table of absolute numbers and ratios to the baseline
("x times the baseline cost": > 1 is worse).
Every response is verified; a wrong or missing answer exits non-zero. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson
from _checks import BenchError, check_add, check_echo, result_of
from http_load import KINDS, bench_http, http_table
from launchers import NODE_MODULES, Unavailable, interpreter, versions
from launchers import SCRIPTS as SERVERS

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
PROTOCOL = "2025-06-18"
MANY = 1000
WINDOW = 64


# ---- one server process ------------------------------------------------------------------------


class Conn:
    def __init__(
        self,
        script: Path,
        many_tools: int = 0,
        argv_prefix: list[str] | None = None,
        sync: bool = False,
        exe: list[str] | None = None,
    ) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO_ROOT / "src") + (
            os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
        )
        env["BENCH_MANY_TOOLS"] = str(many_tools)
        env["BENCH_SYNC"] = "1" if sync else "0"
        env["BENCH_NODE_MODULES"] = str(NODE_MODULES)
        env.pop("PYTHONPROFILE", None)
        # An installed package has its bytecode cached (pip compiles it); a server that recompiled
        # every module at each spawn would measure the compiler, not the start-up.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.proc = subprocess.Popen(
            [*(exe or [sys.executable]), *(argv_prefix or []), str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(REPO_ROOT),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.w = self.proc.stdin
        self.r = self.proc.stdout
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> int:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        rid = -1
        if not notify:
            self.next_id += 1
            rid = msg["id"] = self.next_id
        self.w.write(orjson.dumps(msg) + b"\n")
        self.w.flush()
        return rid

    def recv(self) -> dict:
        """The next response (notifications and server requests are skipped)."""
        while True:
            line = self.r.readline()
            if not line:
                raise BenchError(f"server closed stdout (exit code {self.proc.poll()})")
            try:
                msg = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise BenchError(f"invalid JSON from server: {line[:200]!r}") from e
            if "method" in msg:
                continue
            if "result" not in msg and "error" not in msg:
                raise BenchError(f"not a response: {line[:200]!r}")
            return msg

    def call(self, method: str, params: dict | None = None) -> dict:
        rid = self.send(method, params)
        msg = self.recv()
        return result_of(msg, rid)

    def initialize(self) -> dict:
        res = self.call(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "mcp-bench", "version": "1"},
            },
        )
        if "serverInfo" not in res or "protocolVersion" not in res:
            raise BenchError(f"bad initialize result: {res!r}")
        self.send("notifications/initialized", notify=True)
        return res

    def vm_hwm_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise BenchError("no VmHWM in /proc status")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.w.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---- measurements --------------------------------------------------------------------------------


def cold_start(script: Path, spawns: int, exe: list[str]) -> float:
    """Median ms from spawn to the initialize response."""
    times = []
    for _ in range(spawns):
        t0 = time.perf_counter()
        c = Conn(script, exe=exe)
        try:
            c.initialize()
            times.append((time.perf_counter() - t0) * 1e3)
        finally:
            c.close()
    return statistics.median(times)


def add_params(i: int) -> dict:
    return {"name": "add", "arguments": {"a": i, "b": 2 * i + 1}}


def latencies(c: Conn, n: int) -> list[float]:
    """Seconds of each of `n` tools/call add, one at a time."""
    lat = []
    pc = time.perf_counter
    for i in range(n):
        t0 = pc()
        res = c.call("tools/call", add_params(i))
        lat.append(pc() - t0)
        check_add(res, 3 * i + 1)
    return lat


def percentiles(lat: list[float]) -> tuple[float, float]:
    """p50, p99 in µs."""
    lat = sorted(lat)
    return lat[len(lat) // 2] * 1e6, lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6


def sequential(c: Conn, n: int) -> tuple[float, float]:
    """p50, p99 latency in µs of one tools/call add at a time."""
    return percentiles(latencies(c, n))


def pipelined(c: Conn, n: int, window: int = WINDOW) -> float:
    """tools/call add per second with `window` requests in flight on one pipe."""
    pending: dict[int, int] = {}
    sent = 0
    t0 = time.perf_counter()
    while sent < min(window, n):
        pending[c.send("tools/call", add_params(sent))] = 3 * sent + 1
        sent += 1
    done = 0
    while done < n:
        msg = c.recv()
        rid = msg.get("id")
        if rid not in pending:
            raise BenchError(f"pipelined: unexpected response id {rid!r}")
        expect = pending.pop(rid)
        check_add(result_of(msg, rid), expect)
        done += 1
        if sent < n:
            pending[c.send("tools/call", add_params(sent))] = 3 * sent + 1
            sent += 1
    return n / (time.perf_counter() - t0)


def big_echo(c: Conn, times: int, size: int = 1 << 20) -> float:
    """Median MiB/s of a round trip of `size` characters through echo (MiB counted one way)."""
    rates = []
    for k in range(times):
        text = (("abcdefghijklmnopqrstuvwxyz0123456789" * (size // 36 + 1))[: size - 8]) + f"{k:08d}"
        t0 = time.perf_counter()
        res = c.call("tools/call", {"name": "echo", "arguments": {"text": text}})
        dt = time.perf_counter() - t0
        check_echo(res, text)
        rates.append((size / (1 << 20)) / dt)
    return statistics.median(rates)


def list_tools(c: Conn, times: int) -> float:
    """Median ms for a full tools/list (following nextCursor) of MANY + 2 tools."""
    out = []
    expected = {"echo", "add"} | {f"t{i}" for i in range(MANY)}
    for _ in range(times):
        t0 = time.perf_counter()
        names: list[str] = []
        cursor = None
        while True:
            res = c.call("tools/list", {"cursor": cursor} if cursor else None)
            tools = res.get("tools")
            if not isinstance(tools, list):
                raise BenchError(f"tools/list: no tools list in {str(res)[:200]}")
            for t in tools:
                if not isinstance(t.get("inputSchema"), dict):
                    raise BenchError(f"tools/list: tool without inputSchema {t!r}")
                names.append(t["name"])
            cursor = res.get("nextCursor")
            if not cursor:
                break
        out.append((time.perf_counter() - t0) * 1e3)
        if len(names) != len(expected) or set(names) != expected:
            raise BenchError(f"tools/list: got {len(names)} tools, expected {len(expected)}")
    return statistics.median(out)


def bench_server(name: str, counts: dict) -> dict[str, float]:
    script, exe = SERVERS[name], interpreter(name)
    r: dict[str, float] = {}
    r["cold_ms"] = cold_start(script, counts["spawns"], exe)
    c = Conn(script, exe=exe)
    try:
        c.initialize()
        sequential(c, min(200, counts["seq"]))  # warm-up
        r["seq_p50_us"], r["seq_p99_us"] = sequential(c, counts["seq"])
        r["pipe_cps"] = pipelined(c, counts["pipe"])
        r["echo_mibs"] = big_echo(c, counts["echo"])
        r["rss_mib"] = c.vm_hwm_kib() / 1024
    finally:
        c.close()
    c = Conn(script, many_tools=MANY, exe=exe)
    try:
        c.initialize()
        r["list_ms"] = list_tools(c, counts["list"])
        r["rss_many_mib"] = c.vm_hwm_kib() / 1024
    finally:
        c.close()
    return r


def bench_sync(counts: dict, blocks: int = 10) -> dict[str, float]:
    """mcpkit with echo and add written as plain `def`, and the async server beside it: the two serve
    alternate blocks of sequential and of pipelined calls, so the machine's drift hits both alike.
    Keys "sync " + metric and "async " + metric."""
    conns = {"sync": Conn(SERVERS["mcpkit"], sync=True), "async": Conn(SERVERS["mcpkit"])}
    try:
        lat: dict[str, list[float]] = {k: [] for k in conns}
        seconds = dict.fromkeys(conns, 0.0)
        for c in conns.values():
            c.initialize()
            sequential(c, min(200, counts["seq"]))  # warm-up
        for _ in range(blocks):
            for k, c in conns.items():
                lat[k] += latencies(c, counts["seq"] // blocks)
        per_block = counts["pipe"] // blocks
        for _ in range(blocks):
            for k, c in conns.items():
                seconds[k] += per_block / pipelined(c, per_block)
    finally:
        for c in conns.values():
            c.close()
    r: dict[str, float] = {}
    for k in conns:
        r[f"{k} seq_p50_us"], r[f"{k} seq_p99_us"] = percentiles(lat[k])
        r[f"{k} pipe_cps"] = per_block * blocks / seconds[k]
    return r


# ---- report --------------------------------------------------------------------------------------

# key, label, unit, format, higher_is_better, target ratio for mcpkit (cost vs baseline)
METRICS = [
    ("cold_ms", "cold start (spawn → initialize reply)", "ms", "{:.1f}", False, 2.5),
    ("seq_p50_us", "sequential tools/call add, p50", "µs", "{:.0f}", False, 2.0),
    ("seq_p99_us", "sequential tools/call add, p99", "µs", "{:.0f}", False, None),
    ("pipe_cps", f"pipelined tools/call add, {WINDOW} in flight", "calls/s", "{:.0f}", True, 2.5),
    ("echo_mibs", "1 MiB echo round trip", "MiB/s", "{:.1f}", True, 1.2),
    ("list_ms", f"tools/list, {MANY + 2} tools", "ms", "{:.2f}", False, 1.5),
    ("rss_mib", "peak RSS (VmHWM), main workload", "MiB", "{:.1f}", False, None),
    ("rss_many_mib", f"peak RSS (VmHWM), {MANY} tools", "MiB", "{:.1f}", False, None),
]
RSS_TARGET_MIB = 30.0
# the sync-tool rows (issue 20): key, and the target as a cost ratio to mcpkit's async figure
SYNC_TARGETS = {"pipe_cps": 1.5, "seq_p50_us": None, "seq_p99_us": 3.0}
# targets against the asyncio baseline (issue 20: the floor for any asyncio server), used when it ran
ASYNCIO_TARGETS = {"cold_ms": 1.3}


def cost_ratio(key_hib: bool, value: float, base: float) -> float:
    return base / value if key_hib else value / base


def table(results: dict[str, dict[str, float]]) -> str:
    names = list(results)
    base = results.get("baseline")
    floor = results.get("asyncio") if "mcpkit" in results else None
    head = ["metric"]
    for n in names:
        head.append(n)
        if base is not None and n != "baseline":
            head.append(f"{n} ÷ baseline")
        if floor is not None and n == "mcpkit":
            head.append("mcpkit ÷ asyncio")
    if base is not None and "mcpkit" in results:
        head.append("mcpkit target")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for key, label, unit, fmt, hib, target in METRICS:
        row = [f"{label} ({unit})"]
        for n in names:
            v = results[n][key]
            row.append(fmt.format(v))
            if base is not None and n != "baseline":
                row.append(f"{cost_ratio(hib, v, base[key]):.2f}×")
            if floor is not None and n == "mcpkit":
                row.append(f"{cost_ratio(hib, v, floor[key]):.2f}×")
        if base is not None and "mcpkit" in results:
            row.append(_target_cell(results, key, hib, target))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _target_cell(results: dict[str, dict[str, float]], key: str, hib: bool, target: float | None) -> str:
    """mcpkit against its target: the asyncio baseline's where one is set and it ran, else the baseline's."""
    mine = results["mcpkit"][key]
    if key == "rss_mib":
        return f"≤ {RSS_TARGET_MIB:.0f} MiB {'✓' if mine <= RSS_TARGET_MIB else '✗'}"
    if key in ASYNCIO_TARGETS and "asyncio" in results:
        limit = ASYNCIO_TARGETS[key]
        ok = cost_ratio(hib, mine, results["asyncio"][key]) <= limit
        return f"≤ {limit}× asyncio {'✓' if ok else '✗'}"
    if target is None:
        return ""
    ok = cost_ratio(hib, mine, results["baseline"][key]) <= target
    return f"≤ {target}× {'✓' if ok else '✗'}"


def sync_table(runs: list[dict[str, float]], base: dict[str, float] | None) -> str:
    """The same tools as plain `def` against async ones, measured side by side (`bench_sync`), and the
    baseline's figure if it ran; `sync ÷ async` is the median of the per-repetition ratios."""
    head = ["sync tools (plain def)", "mcpkit async, beside", "mcpkit sync", "sync ÷ async"]
    head += ["sync ÷ baseline"] if base is not None else []
    head.append("target")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    medians = _medians(runs)
    for key, label, unit, fmt, hib, _ in METRICS:
        if key not in SYNC_TARGETS:
            continue
        sync, asy = medians["sync " + key], medians["async " + key]
        ratio = statistics.median(cost_ratio(hib, r["sync " + key], r["async " + key]) for r in runs)
        row = [f"{label} ({unit})", fmt.format(asy), fmt.format(sync), f"{ratio:.2f}×"]
        if base is not None:
            row.append(f"{cost_ratio(hib, sync, base[key]):.2f}×")
        target = SYNC_TARGETS[key]
        row.append("" if target is None else f"≤ {target}× async {'✓' if ratio <= target else '✗'}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _available(names: list[str]) -> list[str]:
    """`names` without the peers that cannot run here, each skipped with its reason on stderr."""
    out = []
    for n in names:
        try:
            interpreter(n)
        except Unavailable as e:
            print(f"# SKIPPED {n}: {e}", file=sys.stderr)
            continue
        out.append(n)
    return out


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--smoke", action="store_true", help="small counts (CI), well under 60 s")
    p.add_argument("--repeat", type=int, default=None, help="repetitions; the table shows medians")
    p.add_argument("--only", default=",".join(SERVERS), help="comma list of: " + ",".join(SERVERS))
    p.add_argument("--spawns", type=int, help="cold starts per repetition")
    p.add_argument("--seq", type=int, help="sequential calls")
    p.add_argument("--pipe", type=int, help="pipelined calls")
    p.add_argument("--echo", type=int, help="1 MiB echoes")
    p.add_argument("--list", type=int, help="tools/list calls")
    p.add_argument("--http", type=int, help="HTTP tools/call per concurrency level (0: no HTTP workloads)")
    p.add_argument("--no-sync", action="store_true", help="skip the rows of mcpkit with plain `def` tools")
    p.add_argument("--idle", type=int, help="idle HTTP sessions opened for the memory figure (0: skip)")
    a = p.parse_args(argv)
    if a.smoke:
        counts = {"spawns": 3, "seq": 300, "pipe": 2000, "echo": 3, "list": 3, "http": 200, "idle": 100}
        repeat = a.repeat or 1
    else:
        counts = {"spawns": 10, "seq": 2000, "pipe": 20000, "echo": 5, "list": 10, "http": 3000, "idle": 1000}
        repeat = a.repeat or 3
    for k in counts:
        if getattr(a, k) is not None:
            counts[k] = getattr(a, k)
    # As pip would at install: mcpkit runs from the checkout, whose bytecode may not be cached yet.
    compileall.compile_dir(str(REPO_ROOT / "src"), quiet=1)
    names = [n.strip() for n in a.only.split(",") if n.strip()]
    bad = [n for n in names if n not in SERVERS]
    if bad:
        p.error(f"unknown server(s) {bad}; choose from {list(SERVERS)}")
    names.sort(key=lambda n: list(SERVERS).index(n))  # baseline first
    names = _available(names)

    print(f"# counts {counts}, repeat {repeat}, python {sys.version.split()[0]}", file=sys.stderr)
    kinds = [k for k in KINDS if k.split("-")[0] in names] if counts["http"] else []
    sync = ["sync"] if "mcpkit" in names and not a.no_sync else []
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names + sync + ["http:" + k for k in kinds]}
    t_start = time.perf_counter()
    try:
        for rep in range(repeat):
            for n in names:  # interleaved, so drift hits every server alike
                t0 = time.perf_counter()
                runs[n].append(bench_server(n, counts))
                print(f"# rep {rep + 1}/{repeat} {n}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
                if n == "mcpkit" and sync:  # right after the async figures it is compared with
                    t0 = time.perf_counter()
                    runs["sync"].append(bench_sync(counts))
                    print(
                        f"# rep {rep + 1}/{repeat} mcpkit sync: {time.perf_counter() - t0:.1f} s",
                        file=sys.stderr,
                    )
            for n in kinds:
                t0 = time.perf_counter()
                runs["http:" + n].append(bench_http(n, REPO_ROOT, counts["http"], counts["idle"]))
                cpu = max(v for k, v in runs["http:" + n][-1].items() if k.endswith("client_cpu"))
                print(
                    f"# rep {rep + 1}/{repeat} http {n}: {time.perf_counter() - t0:.1f} s,"
                    f" load generator CPU at most {cpu:.0%} of one core",
                    file=sys.stderr,
                )
    except BenchError as e:
        print(f"FAIL ({n}): {e}", file=sys.stderr)
        return 1
    results = {n: {k: statistics.median(r[k] for r in runs[n]) for k, *_ in METRICS} for n in names}
    print(table(results))
    if sync:
        print()
        print(sync_table(runs["sync"], results.get("baseline")))
    if kinds:
        print()
        print(http_table({n: _medians(runs["http:" + n]) for n in kinds}))
    print(
        f"\nMedians of {repeat} repetition(s); ratios are x times the baseline cost"
        " (times and memory: x / baseline; throughput: baseline / x), so > 1 means worse than the baseline."
        f" Total {time.perf_counter() - t_start:.0f} s."
    )
    if peers := versions(names):
        print(f"Peers: {peers}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
