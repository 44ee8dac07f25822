"""The browser and where its screenshots go, for the inspector's browser tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cdp import Browser, chromium


def in_ci() -> bool:
    flags = (os.environ.get("MCPKIT_CI", ""), os.environ.get("CI", ""))
    return any(flag.strip().lower() not in ("", "0", "false", "no") for flag in flags)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    binary = chromium()
    if binary is None:
        message = "chromium not installed (apt-get install chromium)"
        if in_ci():
            pytest.fail(f"{message}; CI must not skip the browser tests (.ci/run installs it as root)")
        pytest.skip(message)
    found = Browser(binary)
    yield found
    found.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("MCPKIT_SCREENSHOTS")
    return Path(where) if where else tmp_path_factory.mktemp("screenshots")
