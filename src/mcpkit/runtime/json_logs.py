"""`JSONFormatter`: one JSON object per log line, for log pipelines (`mcpkit serve --log-format json`).

Each line has `time` (ISO 8601, UTC), `level`, `logger` and `message`, the traceback as `exception` when
there is one, and the request fields `mcpkit.server.middleware.RequestLog` puts in a record's `extra`
(`method`, `name`, `outcome`, `duration_ms`, `client`, `session`, `trace_id`) when present.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import orjson

__all__ = ["JSONFormatter"]

# a record's `extra` attribute -> its key in the line
FIELDS = {
    "mcp_method": "method",
    "mcp_name": "name",
    "mcp_outcome": "outcome",
    "mcp_ms": "duration_ms",
    "mcp_client": "client",
    "mcp_session": "session",
    "trace_id": "trace_id",
}


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for attribute, key in FIELDS.items():
            value = record.__dict__.get(attribute)
            if value is not None:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()
