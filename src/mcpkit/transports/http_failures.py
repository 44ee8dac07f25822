"""Moved to `mcpkit.transports.http_client.failures`; this old import path gives that same module."""

import sys

from .http_client import failures as _moved
from .http_client.failures import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
