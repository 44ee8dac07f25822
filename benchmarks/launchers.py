"""How each stdio benchmark server is started, and the peers that need something outside the shared venv.

- `ts`: node and the TypeScript SDK from the checkout's `.interop/npm` (installed by scripts/setup-peers).
- `fastmcp`: its own venv, `benchmarks/.venv-fastmcp`, created here on first use with the pinned version
  (fastmcp pins its own `mcp` release, which must not replace the shared venv's).

A peer that cannot be had is skipped with a message saying why, not failed: `Unavailable`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
SERVERS_DIR = HERE / "servers"
SCRIPTS = {
    "baseline": SERVERS_DIR / "baseline_server.py",
    "asyncio": SERVERS_DIR / "asyncio_baseline_server.py",
    "mcpkit": SERVERS_DIR / "mcpkit_server.py",
    "sdk": SERVERS_DIR / "sdk_server.py",
    "ts": SERVERS_DIR / "ts_server.mjs",
    "fastmcp": SERVERS_DIR / "fastmcp_server.py",
}
FASTMCP_VERSION = "4.2.3"
FASTMCP_VENV = HERE / ".venv-fastmcp"
NODE_MODULES = REPO_ROOT / ".interop" / "npm" / "node_modules"
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk"


class Unavailable(Exception):
    """A peer that cannot run on this machine; the message says why and how to get it."""


def interpreter(name: str) -> list[str]:
    """The command that runs `name`'s script (the script path follows it)."""
    if name == "ts":
        return [_node()]
    if name == "fastmcp":
        return [str(_fastmcp_python())]
    return [sys.executable]


def versions(names: list[str]) -> str:
    """The peers' versions, for the report."""
    out = []
    if "sdk" in names:
        from importlib.metadata import version

        out.append(f"mcp {version('mcp')}")
    if "ts" in names:
        sdk = json.loads((TS_SDK / "package.json").read_text())["version"]
        node = subprocess.run([_node(), "--version"], capture_output=True, text=True).stdout.strip()
        out.append(f"@modelcontextprotocol/sdk {sdk} on node {node}")
    if "fastmcp" in names:
        out.append(f"fastmcp {FASTMCP_VERSION} (its venv: Python {sys.version.split()[0]})")
    return ", ".join(out)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise Unavailable("node is not installed")
    if not (TS_SDK / "package.json").is_file():
        raise Unavailable(f"the TypeScript SDK is not in {NODE_MODULES} (run scripts/setup-peers)")
    return node


def _fastmcp_python() -> Path:
    """The fastmcp venv's interpreter, creating the venv with the pinned version if it is missing."""
    python = FASTMCP_VENV / "bin" / "python"
    pattern = f"lib/python*/site-packages/fastmcp-{FASTMCP_VERSION}.dist-info"
    if python.exists() and any(FASTMCP_VENV.glob(pattern)):
        return python
    print(f"# creating {FASTMCP_VENV} with fastmcp=={FASTMCP_VERSION} (once)", file=sys.stderr)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    steps = [[sys.executable, "-m", "venv", str(FASTMCP_VENV)], [*pip, f"fastmcp=={FASTMCP_VERSION}"]]
    for cmd in steps:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired as e:
            raise Unavailable(f"{' '.join(cmd[-2:])} took over 600 s (no network?)") from e
        if done.returncode != 0:
            err = [line for line in done.stderr.splitlines() if line and not line.startswith("WARNING")]
            last = err[-1] if err else f"exit {done.returncode}"
            raise Unavailable(f"could not install fastmcp=={FASTMCP_VERSION} (no network for pip?): {last}")
    return python
