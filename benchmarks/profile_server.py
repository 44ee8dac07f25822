#!/usr/bin/env python3
"""cProfile a benchmark server under the pipelined tools/call workload and print the hotspots.

    python benchmarks/profile_server.py [mcpkit|sdk|baseline] [--calls 20000] [--top 25]
    python benchmarks/profile_server.py mcpkit --py-spy [--seconds 6]   # sampling, no profiler overhead

The server runs under cProfile (python -m cProfile -o ...); the profile is written when the
server exits on stdin EOF. Shares are of the server process's total profiled time.
"""

from __future__ import annotations

import argparse
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("server", nargs="?", default="mcpkit", choices=list(run.SERVERS))
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--py-spy", action="store_true", help="sample with py-spy (pip install py-spy) instead")
    p.add_argument("--seconds", type=int, default=6, help="py-spy sampling time")
    a = p.parse_args()
    if a.py_spy:
        return spy(a)
    out = Path(tempfile.mkdtemp()) / f"{a.server}.prof"
    c = run.Conn(run.SERVERS[a.server], argv_prefix=["-m", "cProfile", "-o", str(out)])
    try:
        c.initialize()
        rate = run.pipelined(c, a.calls)
    finally:
        c.close()
    print(f"{a.server}: {rate:.0f} calls/s under cProfile ({a.calls} pipelined calls); profile {out}\n")
    st = pstats.Stats(str(out))
    total = st.total_tt  # type: ignore[attr-defined]
    rows = []
    for (file, line, fn), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        rows.append((tt, ct, nc, f"{fn}", f"{file}:{line}"))
    print(f"total {total:.2f} s\n\n## by own time (tottime)\n")
    print("| function | file:line | own % | cumulative % | calls |\n|---|---|---:|---:|---:|")
    for tt, ct, nc, fn, loc in sorted(rows, reverse=True)[: a.top]:
        print(f"| {fn} | {short(loc)} | {100 * tt / total:.1f} | {100 * ct / total:.1f} | {nc} |")
    print("\n## own time by file\n")
    by_file: dict[str, float] = {}
    for tt, _ct, _nc, _fn, loc in rows:
        f = short(loc.rsplit(":", 1)[0])
        by_file[f] = by_file.get(f, 0.0) + tt
    print("| file | own % |\n|---|---:|")
    for f, tt in sorted(by_file.items(), key=lambda kv: kv[1], reverse=True)[: a.top]:
        print(f"| {f} | {100 * tt / total:.1f} |")
    print("\n## by cumulative time (recursive event-loop frames exceed 100%)\n")
    print("| function | file:line | cumulative % | own % | calls |\n|---|---|---:|---:|---:|")
    for tt, ct, nc, fn, loc in sorted(rows, key=lambda r: r[1], reverse=True)[: a.top]:
        print(f"| {fn} | {short(loc)} | {100 * ct / total:.1f} | {100 * tt / total:.1f} | {nc} |")
    return 0


def spy(a: argparse.Namespace) -> int:
    import collections
    import re
    import shutil
    import subprocess
    import time

    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out = Path(tempfile.mkdtemp()) / f"{a.server}.spy.txt"
    c = run.Conn(run.SERVERS[a.server], exe=run.interpreter(a.server))
    try:
        c.initialize()
        cmd = [
            exe,
            "record",
            "--pid",
            str(c.proc.pid),
            "-d",
            str(a.seconds),
            "-r",
            "500",
            "-f",
            "raw",
            "-o",
            str(out),
            "--nonblocking",
        ]
        prof = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(1.0)
        t0, n = time.perf_counter(), 0
        while prof.poll() is None:
            run.pipelined(c, 5000)
            n += 5000
        rate = n / (time.perf_counter() - t0)
        print(prof.communicate()[0].decode().strip())
    finally:
        c.close()
    own: collections.Counter[str] = collections.Counter()
    own_file: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        k = int(count)
        total += k
        frames = [short(re.sub(r":\d+\)$", ")", f)) for f in stack.split(";")]
        own[frames[-1]] += k
        own_file[frames[-1].rpartition("(")[2].rstrip(")")] += k
        for f in set(frames):
            incl[f] += k
    print(f"\n{a.server}: {rate:.0f} calls/s while sampled; {total} samples; shares are of all samples\n")
    for title, counter in (
        ("own time by file", own_file),
        ("own time by function", own),
        ("inclusive", incl),
    ):
        print(f"## {title}\n\n| frame | share |\n|---|---:|")
        for f, k in counter.most_common(a.top):
            print(f"| {f or '(unknown)'} | {100 * k / total:.1f}% |")
        print()
    return 0


def short(loc: str) -> str:
    for marker in ("/src/", "/site-packages/", "/lib/python3"):
        i = loc.find(marker)
        if i >= 0:
            return loc[i + 1 :]
    return loc


if __name__ == "__main__":
    sys.exit(main())
