"""Scale-out: a Streamable HTTP server's sessions shared by every worker of a cluster, in Redis.

Needs the `redis` extra (`pip install "mcpkit[redis]"`).
"""

from __future__ import annotations

from .backplane import RedisBackplane
from .identity_store import RedisIdentityStore
from .limits import RedisLimits
from .replay_store import RedisReplayStore
from .startup import StoreRefused

__all__ = ["RedisBackplane", "RedisIdentityStore", "RedisLimits", "RedisReplayStore", "StoreRefused"]
