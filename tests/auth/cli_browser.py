"""A browser for the `mcpkit --auth oauth` test: $BROWSER runs it with the authorization URL. It logs in
as alice at the provider (httpx, its devInteractions forms) and follows the redirect to the CLI's loopback
listener, as a person's browser would."""

import sys
from pathlib import Path

import anyio
import httpx

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from auth_server import Browser  # noqa: E402


async def main(url: str) -> None:
    redirect = await Browser("alice")(url)
    async with httpx.AsyncClient() as http:
        answer = await http.get(redirect)
    Path(sys.argv[2]).write_text(f"{answer.status_code} {answer.text}")


anyio.run(main, sys.argv[1])
