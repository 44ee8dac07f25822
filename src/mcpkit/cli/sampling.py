"""`--sampling CMD`: answer a server's sampling/createMessage by running a command, once per request.

The contract (examples/sampler.py is one):
- stdin: the request's params as one JSON object (`messages`, `maxTokens`, and any of `systemPrompt`,
  `modelPreferences`, `temperature`, `stopSequences`, `includeContext`, `tools`, `metadata`).
- stdout, exit status 0: either a CreateMessageResult as JSON (`content` required; `role` defaults to
  "assistant", `model` to the command's name), or plain text, which becomes the assistant's text reply.
- anything else (a non-zero exit, nothing printed, JSON without `content`, no answer within the limit,
  a command that does not start) is an error sent back to the server as the request's error (its
  last stderr line included), so the server, and the model calling its tool, see why; the CLI goes on.
  In the 2026-07-28 era an input response cannot be an error: there the call ends with that error.
A `.py` command is run by this Python. Its stderr is kept for the error message; a sampler that talks
to a person opens /dev/tty.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
import orjson

from ..protocol.errors import INTERNAL_ERROR, MCPError
from ..protocol.jsonrpc import JSON
from .errors import UsageError

__all__ = ["MAX_OUTPUT", "SAMPLING_TIMEOUT", "sampling_by_command"]

SAMPLING_TIMEOUT = 300.0
MAX_OUTPUT = 16 * 1024 * 1024
_SHOWN = 300  # characters of a sampler's stderr or output quoted in an error


def _result(stdout: bytes, model: str) -> JSON:
    text = stdout.decode(errors="replace").strip()
    if not text:
        raise ValueError("printed nothing (it must print a JSON result or the reply's text)")
    if not text.startswith("{"):
        return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model}
    try:
        result: JSON = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"printed JSON that does not parse ({exc}): {text[:_SHOWN]}") from None
    if not isinstance(result.get("content"), dict | list):
        raise ValueError(f"printed JSON without a content object: {text[:_SHOWN]}")
    if result.setdefault("role", "assistant") != "assistant":
        raise ValueError(f"printed a result whose role is {result['role']!r}, not 'assistant'")
    result.setdefault("model", model)
    return result


async def _run(argv: list[str], data: bytes) -> tuple[int, bytes, bytes]:
    """Run `argv` with `data` on its stdin (a command that never reads it is fine); its exit status,
    stdout and stderr, each at most MAX_OUTPUT bytes (ValueError past that)."""
    async with await anyio.open_process(argv, stdin=PIPE, stdout=PIPE, stderr=PIPE) as process:
        outputs: tuple[bytearray, bytearray] = (bytearray(), bytearray())

        async def feed() -> None:
            assert process.stdin is not None
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.send(data)
            await process.stdin.aclose()

        async def drain(stream: Any, into: bytearray) -> None:
            async for chunk in stream:
                into.extend(chunk)
                if len(into) > MAX_OUTPUT:
                    process.kill()
                    raise ValueError(f"it printed more than {MAX_OUTPUT} bytes")

        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            tg.start_soon(drain, process.stdout, outputs[0])
            tg.start_soon(drain, process.stderr, outputs[1])
        returncode = await process.wait()
    return returncode, bytes(outputs[0]), bytes(outputs[1])


def sampling_by_command(command: str, timeout: float = SAMPLING_TIMEOUT) -> Callable[[JSON], Awaitable[JSON]]:
    """The sampling handler that runs `command` for each request (see the module's contract)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"--sampling {command!r} does not parse: {exc}") from None
    if not argv:
        raise UsageError("--sampling needs a command")
    if argv[0].endswith(".py"):
        argv = [sys.executable, *argv]
    name = Path(argv[-1] if argv[0] == sys.executable else argv[0]).name

    def failed(why: str) -> MCPError:
        return MCPError(INTERNAL_ERROR, f"the --sampling command failed: {why}")

    async def sample(params: JSON) -> JSON:
        try:
            with anyio.fail_after(timeout):
                returncode, stdout, stderr = await _run(argv, orjson.dumps(params))
        except TimeoutError:
            raise failed(f"no answer within {timeout:g}s") from None
        except OSError as exc:
            raise failed(f"it could not start ({exc})") from None
        except ValueError as exc:
            raise failed(str(exc)) from None
        if returncode != 0:
            lines = stderr.decode(errors="replace").strip().splitlines()
            said = f": {lines[-1][:_SHOWN]}" if lines else ""
            raise failed(f"it exited with status {returncode}{said}")
        try:
            return _result(stdout, name)
        except ValueError as exc:
            raise failed(f"it {exc}") from None

    return sample
