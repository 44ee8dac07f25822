"""The official conformance suite's non-auth client scenarios against examples/conformance_client.py.

Runs ../shared/tools/conformance-client once per scenario (a few seconds each): the 0.1.16 suite
(handshake era; its mocks answer any probe with `{}`) and, when conformance 0.2.0-alpha.12 is
installed, the scored non-auth scenarios of its 2026-07-28 requirements, run at that wire. Skipped
when the tool or a suite it installs into ./.interop is absent, so the test never downloads anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.interop
ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT.parent / "shared" / "tools" / "conformance-client"
MODERN_SUITE = "0.2.0-alpha.12"
# Every client scenario of conformance 0.1.16 outside auth/ (mcpkit has no OAuth yet).
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
# The scored client scenarios of the 2026-07-28 requirements in 0.2.0-alpha.12, outside auth/.
MODERN_SCENARIOS = [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
]


def _installed(version: str = "*") -> bool:
    interop = ROOT / ".interop"
    return TOOL.exists() and any(interop.glob(f"conformance-{version}/node_modules/.bin/conformance"))


def _run(tmp_path: Path, scenario: str, *flags: str, suite: str | None = None) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("CONFORMANCE_VERSION", None)
    if suite is not None:
        env["CONFORMANCE_VERSION"] = suite
    command = [str(TOOL), "-o", str(tmp_path), "--scenario", scenario, *flags, "--"]
    command += [sys.executable, str(ROOT / "examples" / "conformance_client.py")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "1 passed, 0 failed", done.stdout + done.stderr


@pytest.mark.skipif(not _installed(), reason="the conformance suite is not installed in ./.interop")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_suites_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    _run(tmp_path, scenario)


@pytest.mark.skipif(not _installed(MODERN_SUITE), reason=f"conformance {MODERN_SUITE} is not installed")
@pytest.mark.parametrize("scenario", MODERN_SCENARIOS)
def test_the_conformance_suites_2026_07_28_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    _run(tmp_path, scenario, "--spec-version", "2026-07-28", suite=MODERN_SUITE)
