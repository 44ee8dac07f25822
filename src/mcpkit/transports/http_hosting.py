"""Moved to `mcpkit.transports.http_server.hosting`; this old import path gives that same module."""

import sys

from .http_server import hosting as _moved
from .http_server.hosting import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
