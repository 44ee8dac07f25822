from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def requirement(req_id: str) -> pytest.MarkDecorator:
    """Tie a test to a MUST listed in tests/requirements.md."""
    return pytest.mark.requirement(req_id)
