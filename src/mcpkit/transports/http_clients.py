"""Moved to `mcpkit.transports.http_server.clients`; this old import path gives that same module."""

import sys

from .http_server import clients as _moved
from .http_server.clients import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
