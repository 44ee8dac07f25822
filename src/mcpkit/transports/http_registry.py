"""Moved to `mcpkit.transports.http_server.registry`; this old import path gives that same module."""

import sys

from .http_server import registry as _moved
from .http_server.registry import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
