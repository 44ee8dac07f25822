"""The `mcpkit` parser: every command adds its own subparser, with `run` (what main calls) as its default.

A command's module holds its options and its `run`; this table only says which commands there are, in the
order `mcpkit --help` lists them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .. import __version__
from .auth import add_auth
from .call import add_call
from .errors import EXIT_CODES
from .group import add_search, group_parser, wants_group
from .inspect import add_inspect
from .install import add_install
from .proxy import add_proxy
from .query import add_list, add_ping, add_prompt, add_read
from .serve import add_serve
from .tasks import add_tasks

__all__ = ["COMMANDS", "parse", "parser", "split_script_args"]

COMMANDS = (
    add_serve,
    add_proxy,
    add_auth,
    add_install,
    add_list,
    add_call,
    add_read,
    add_prompt,
    add_ping,
    add_tasks,
    add_search,
    add_inspect,
)


def parser() -> argparse.ArgumentParser:
    """The server commands' parser; each subcommand's namespace has `run(args) -> exit code`."""
    codes = "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES)
    top = argparse.ArgumentParser(
        prog="mcpkit",
        description="Serve and talk to Model Context Protocol servers.",
        epilog=f"exit codes:\n{codes}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return top


def split_script_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`mcpkit serve x.py --http -- --db shop.db` (or `mcpkit install ... -- ...`): the words after the first
    `--` are the file's own arguments (its sys.argv[1:]), not mcpkit's."""
    words = list(argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command in ("serve", "install") and "--" in words:
        cut = words.index("--")
        return words[:cut], words[cut + 1 :]
    return words, []


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The arguments of either parser (group_parser for a config command), with `script_args` (the words
    after `--`) and key=value words allowed after options too (`call URL add --json a=2`)."""
    words, script_args = split_script_args(argv)
    args = group_parser().parse_args(words) if wants_group(words) else _parse_server_command(words)
    args.script_args = script_args
    return args


def _parse_server_command(argv: Sequence[str]) -> argparse.Namespace:
    top = parser()
    args, extra = top.parse_known_args(argv)
    if extra and hasattr(args, "pairs") and not any(word.startswith("-") for word in extra):
        args.pairs = [*args.pairs, *extra]
    elif extra:
        top.parse_args(argv)  # argparse's own message for what it does not know, exit 2
    return args
