"""Moved to `mcpkit.transports.http_server.stateless`; this old import path gives that same module."""

import sys

from .http_server import stateless as _moved
from .http_server.stateless import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
