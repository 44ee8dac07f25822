from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpkit.client.era import forget

# Tests import the example servers (examples/everything.py) by module name.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def fresh_eras() -> None:
    """Every test starts with no era remembered: the client remembers one per endpoint URL, and a port
    freed by one test's server is often the next test's, whose server may speak another era."""
    forget()


def requirement(req_id: str) -> pytest.MarkDecorator:
    """Tie a test to a MUST listed in tests/requirements.md."""
    return pytest.mark.requirement(req_id)
