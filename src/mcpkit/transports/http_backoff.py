"""Moved to `mcpkit.transports.http_client.backoff`; this old import path gives that same module."""

import sys

from .http_client import backoff as _moved
from .http_client.backoff import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
