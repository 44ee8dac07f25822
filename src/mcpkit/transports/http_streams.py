"""Moved to `mcpkit.transports.http_server.streams`; this old import path gives that same module."""

import sys

from .http_server import streams as _moved
from .http_server.streams import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
