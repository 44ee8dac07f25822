from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Tests import the example servers (examples/everything.py) by module name.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def requirement(req_id: str) -> pytest.MarkDecorator:
    """Tie a test to a MUST listed in tests/requirements.md."""
    return pytest.mark.requirement(req_id)
