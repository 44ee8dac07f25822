"""sdk_server.py's official-SDK server plus one tool with an `x-mcp-header` parameter, over HTTP.

Run as `python tests/interop/sdk_header_server.py --port N [--json]`. The SDK checks each
Mcp-Param-* header against the body (2026-07-28 "Server Validation"), so a client that mirrors a
parameter wrongly, or not at all, gets HeaderMismatch (-32020).
"""

from __future__ import annotations

import sys
from typing import Annotated

from pydantic import Field
from sdk_server import mcp

Region = Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]


@mcp.tool()
def route(region: Region, note: str = "") -> str:
    """Echo the region the request was routed by."""
    return f"routed to {region}"


if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--port") + 1])
    mcp.run("streamable-http", host="127.0.0.1", port=port, json_response="--json" in sys.argv)
