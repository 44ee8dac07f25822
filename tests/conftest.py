from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client.era import forget

# Tests import the example servers (examples/everything.py) by module name.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `both_loops` runs on asyncio (the native fast paths) and on trio (the anyio ones)."""
    if metafunc.definition.get_closest_marker("both_loops") and "anyio_backend" in metafunc.fixturenames:
        metafunc.parametrize("anyio_backend", ["asyncio", "trio"])


@pytest.fixture(params=["socket", "in-process"])
def hosting(request: pytest.FixtureRequest) -> str:
    """How a test's helper hosts an ASGI app: on a real server (with ASGI lifespan), or driven in this process
    without one (tests/in_process.py). A test taking this runs both ways."""
    return str(request.param)


@pytest.fixture(autouse=True)
def fresh_eras() -> None:
    """Every test starts with no era remembered: the client remembers one per endpoint URL, and a port
    freed by one test's server is often the next test's, whose server may speak another era."""
    forget()


def requirement(req_id: str) -> pytest.MarkDecorator:
    """Tie a test to a MUST listed in tests/requirements.md."""
    return pytest.mark.requirement(req_id)


# ---- the inspector's browser tests (tests/inspector): the browser, and where screenshots go ----------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from inspector.cdp import Browser, chromium

    binary = chromium()
    if binary is None:
        message = "chromium not installed (apt-get install chromium)"
        flags = (os.environ.get("MCPKIT_CI", ""), os.environ.get("CI", ""))
        if any(flag.strip().lower() not in ("", "0", "false", "no") for flag in flags):
            pytest.fail(f"{message}; CI must not skip the browser tests (.ci/run installs it as root)")
        pytest.skip(message)
    found = Browser(binary)
    yield found
    found.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("MCPKIT_SCREENSHOTS")
    return Path(where) if where else tmp_path_factory.mktemp("screenshots")
