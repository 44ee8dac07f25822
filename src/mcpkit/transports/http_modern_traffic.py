"""Moved to `mcpkit.transports.http_client.modern_traffic`; this old import path gives that same module."""

import sys

from .http_client import modern_traffic as _moved
from .http_client.modern_traffic import *  # noqa: F403  (for type checkers)

sys.modules[__name__] = _moved
