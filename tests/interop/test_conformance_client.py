"""The official conformance suite's non-auth client scenarios against examples/conformance_client.py.

Runs ../shared/tools/conformance-client once per scenario (a few seconds each). Skipped when the
tool or the suite it installs into ./.interop is absent, so the test never downloads anything.
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
# Every client scenario of conformance 0.1.16 outside auth/ (mcpkit has no OAuth yet).
SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]


def _installed() -> bool:
    interop = ROOT / ".interop"
    return TOOL.exists() and any(interop.glob("conformance-*/node_modules/.bin/conformance"))


@pytest.mark.skipif(not _installed(), reason="the conformance suite is not installed in ./.interop")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_suites_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [str(TOOL), "-o", str(tmp_path), "--scenario", scenario, "--"]
    command += [sys.executable, str(ROOT / "examples" / "conformance_client.py")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "1 passed, 0 failed", done.stdout + done.stderr
