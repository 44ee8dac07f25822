"""The official conformance suite's client scenarios against examples/conformance_client.py.

Runs ../shared/tools/conformance-client once per scenario (a few seconds each): the 0.1.16 suite
(handshake era; its mocks answer any probe with `{}`) and, when conformance 0.2.0-alpha.12 is
installed, the scored non-auth scenarios of its 2026-07-28 requirements, run at that wire. The auth/*
scenarios run in two harness calls per suite (its `auth` suite in parallel, then the rest in sequence),
about 10 s each instead of ~20 s one scenario a call. Skipped when the tool or a suite it installs into
./.interop is absent, so the test never downloads anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requirement

pytestmark = pytest.mark.interop
ROOT = Path(__file__).resolve().parents[2]
# ../shared/tools from the main checkout; ../../shared/tools from a worktree under /work/wt.
_TOOLS = [base / "shared" / "tools" / "conformance-client" for base in (ROOT.parent, ROOT.parent.parent)]
TOOL = next((tool for tool in _TOOLS if tool.exists()), _TOOLS[0])
MODERN_SUITE = "0.2.0-alpha.12"
# Every client scenario of conformance 0.1.16 outside auth/.
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
    "json-schema-2020-12-preservation",
]


# The auth/* scenarios that the harness's `auth` suite leaves out (back-compat, drafts, extensions).
AUTH_BEYOND_SUITE = [
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
]
AUTH_BEYOND_SUITE_BY_VERSION = {
    "0.1.16": [*AUTH_BEYOND_SUITE, "auth/cross-app-access-complete-flow"],
    MODERN_SUITE: [
        *AUTH_BEYOND_SUITE,
        "auth/enterprise-managed-authorization",
        "auth/wif-jwt-bearer",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "auth/dpop",
        "auth/dpop-nonce",
    ],
}


def _installed(version: str = "*") -> bool:
    interop = ROOT / ".interop"
    return TOOL.exists() and any(interop.glob(f"conformance-{version}/node_modules/.bin/conformance"))


def _run(tmp_path: Path, scenario: str, *flags: str, suite: str | None = None, expect: int = 1) -> None:
    """Run the tool on `scenario` (a --scenario name, or flags alone when empty); all `expect` pass."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("CONFORMANCE_VERSION", None)
    if suite is not None:
        env["CONFORMANCE_VERSION"] = suite
    picked = ["--scenario", scenario] if scenario else []
    command = [str(TOOL), "-o", str(tmp_path), *picked, *flags, "--"]
    command += [sys.executable, str(ROOT / "examples" / "conformance_client.py")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert done.stdout.strip().splitlines()[-1] == f"{expect} passed, 0 failed", done.stdout + done.stderr


@pytest.mark.skipif(not _installed(), reason="the conformance suite is not installed in ./.interop")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_suites_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    _run(tmp_path, scenario)


@pytest.mark.skipif(not _installed(MODERN_SUITE), reason=f"conformance {MODERN_SUITE} is not installed")
@pytest.mark.parametrize("scenario", MODERN_SCENARIOS)
def test_the_conformance_suites_2026_07_28_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    _run(tmp_path, scenario, "--spec-version", "2026-07-28", suite=MODERN_SUITE)


@pytest.mark.parametrize("version", ["0.1.16", MODERN_SUITE])
def test_the_conformance_suites_auth_suite_passes(version: str, tmp_path: Path) -> None:
    if not _installed(version):
        pytest.skip(f"conformance {version} is not installed")
    _run(tmp_path, "", "--suite", "auth", suite=version, expect=14)


@pytest.mark.parametrize("version", ["0.1.16", MODERN_SUITE])
def test_the_conformance_suites_other_auth_scenarios_pass(version: str, tmp_path: Path) -> None:
    if not _installed(version):
        pytest.skip(f"conformance {version} is not installed")
    scenarios = AUTH_BEYOND_SUITE_BY_VERSION[version]
    flags = [flag for name in scenarios[1:] for flag in ("--scenario", name)]
    _run(tmp_path, scenarios[0], *flags, suite=version, expect=len(scenarios))


# The skills extension's client scenarios (SEP-2640): no prefetch, and a tampered SKILL.md (digest,
# size, frontmatter) refused before any supporting file is read. Extension scenarios take no version.
SKILLS_SCENARIOS = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]


@requirement("skills-lazy-retrieval")
@pytest.mark.skipif(not _installed(MODERN_SUITE), reason=f"conformance {MODERN_SUITE} is not installed")
def test_the_conformance_suites_skills_client_scenarios_pass(tmp_path: Path) -> None:
    flags = [flag for name in SKILLS_SCENARIOS[1:] for flag in ("--scenario", name)]
    _run(tmp_path, SKILLS_SCENARIOS[0], *flags, suite=MODERN_SUITE, expect=len(SKILLS_SCENARIOS))
