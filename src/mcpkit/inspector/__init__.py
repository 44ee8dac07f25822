"""`mcpkit inspect`: a local web page to explore and exercise an MCP server, served by mcpkit itself."""

from __future__ import annotations

__all__: list[str] = []
