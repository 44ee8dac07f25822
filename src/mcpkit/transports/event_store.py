"""Moved to `mcpkit.transports.http_server.event_store`; this old import path gives that same module."""

import sys

from .http_server import event_store as _moved
from .http_server.event_store import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
