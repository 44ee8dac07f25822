"""The keyword options of `connect_stdio` and `connect_http`, as TypedDicts so an editor can complete
them and mypy can check them: `Client`'s own, then each transport's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from ..protocol.jsonrpc import JSON
from ..runtime.tracing import TracingOption
from .era import Era
from .handlers import Handler, Roots
from .hosted_tasks import TaskHost
from .result_cache import ResultCache

if TYPE_CHECKING:
    import httpx

    from ..transports.http_client.backoff import Backoff

__all__ = ["ClientOptions", "HTTPOptions", "StdioOptions"]


class ClientOptions(TypedDict, total=False):
    """What `Client(stream, ...)` takes besides the stream (its docstring says what each does)."""

    name: str
    version: str
    sampling: Handler | None
    sampling_tools: bool
    elicitation: Handler | None
    elicitation_url: bool
    roots: Roots | None
    on_log: Callable[[JSON], Awaitable[None] | None] | None
    on_notification: Callable[[str, JSON], Awaitable[None] | None] | None
    on_task_status: Callable[[JSON], Awaitable[None] | None] | None
    timeout: float | None
    max_timeout: float | None
    protocol_version: str | None
    versions: tuple[str, ...]
    era: Era | str | None
    era_key: str | None
    probe_timeout: float
    cache: bool
    shared_cache: ResultCache | None
    max_rounds: int
    tracing: TracingOption
    tasks: bool | TaskHost
    extensions: dict[str, JSON] | None


class StdioOptions(ClientOptions, total=False):
    """connect_stdio: the Client's options and the child process's (see transports.stdio.spawn)."""

    env: Mapping[str, str] | None
    cwd: str | None
    stderr: Any
    max_line: int
    shutdown_timeout: float
    start_new_session: bool


class HTTPOptions(ClientOptions, total=False):
    """connect_http: the Client's options and the Streamable HTTP transport's (see open_http_stream)."""

    auth: httpx.Auth | None
    max_message: int
    reconnect_attempts: int
    reconnect_on_404: bool
    retry_ms: int
    legacy_fallback: bool
    backoff: Backoff | None
