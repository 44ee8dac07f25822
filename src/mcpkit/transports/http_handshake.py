"""Moved to `mcpkit.transports.http_client.handshake`; this old import path gives that same module."""

import sys

from .http_client import handshake as _moved
from .http_client.handshake import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
