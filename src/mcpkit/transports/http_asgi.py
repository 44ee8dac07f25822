"""Moved to `mcpkit.transports.http_server.asgi`; this old import path gives that same module."""

import sys

from .http_server import asgi as _moved
from .http_server.asgi import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
