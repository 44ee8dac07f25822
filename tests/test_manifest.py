"""The requirement manifest and the tests agree: every MUST listed has a test, every test id is listed."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def manifest_ids() -> set[str]:
    rows = (TESTS / "requirements.md").read_text().splitlines()
    return {m.group(1) for row in rows if (m := re.match(r"\| ([a-z0-9-]+) \|", row))} - {"id"}


def ids_named_by_tests() -> set[str]:
    pattern = re.compile(r"requirement\(\"([a-z0-9-]+)\"\)")
    return {m for path in TESTS.rglob("test_*.py") for m in pattern.findall(path.read_text())}


def test_every_requirement_in_the_manifest_has_a_test() -> None:
    assert manifest_ids() - ids_named_by_tests() == set()


def test_every_requirement_a_test_names_is_in_the_manifest() -> None:
    assert ids_named_by_tests() - manifest_ids() == set()


def test_the_manifest_is_not_empty() -> None:
    assert len(manifest_ids()) >= 25
