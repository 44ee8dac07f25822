"""Moved to `mcpkit.transports.http_server.sessions`; this old import path gives that same module."""

import sys

from .http_server import sessions as _moved
from .http_server.sessions import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
