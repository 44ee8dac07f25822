"""Moved to `mcpkit.transports.http_client.legacy_sse`; this old import path gives that same module."""

import sys

from .http_client import legacy_sse as _moved
from .http_client.legacy_sse import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
