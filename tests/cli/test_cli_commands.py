"""The command table (issue 28 item 4): each command adds its own subparser and names the function that
runs it, so main dispatches in one place, `args.run(args)`."""

from __future__ import annotations

import argparse
from typing import Any

from mcpkit.cli.commands import COMMANDS, parse, parser


class Recording:
    """Subparsers that keep each parser a command adds (argparse offers no public way to list them)."""

    def __init__(self) -> None:
        self.sub = argparse.ArgumentParser().add_subparsers(dest="command")
        self.made: dict[str, argparse.ArgumentParser] = {}

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser:
        self.made[name] = self.sub.add_parser(name, **options)
        return self.made[name]


def test_every_command_adds_one_subparser_that_names_its_run() -> None:
    names = []
    for add in COMMANDS:
        sub = Recording()
        add(sub)
        assert len(sub.made) == 1, add.__name__
        (name, cmd), *_ = sub.made.items()
        assert callable(cmd.get_default("run")), name
        names.append(name)
    listed = "serve proxy auth install list call read prompt ping tasks search inspect"
    assert names == listed.split()


def test_the_parsed_command_carries_its_run_and_the_words_after_the_double_dash() -> None:
    served = parse(["serve", "app.py", "--http", "--", "--db", "shop.db"])
    assert served.run.__name__ == "run_serve"
    assert served.script_args == ["--db", "shop.db"]
    assert parse(["ping", "http://localhost:8000/mcp"]).script_args == []
    assert parse(["search", "create an issue"]).command == "search"  # the config commands' parser
    assert callable(parse(["list", "--config", "mcp.json"]).run)


def test_the_help_lists_the_commands_in_the_table_order() -> None:
    usage = parser().format_usage()
    assert "{serve,proxy,auth,install,list,call,read,prompt,ping,tasks,search,inspect}" in usage


def test_the_era_flag_takes_every_era_and_the_name_modern_had_before_0_1() -> None:
    from mcpkit.cli.connect import ERA_CHOICES
    from mcpkit.client.era import Era

    assert set(ERA_CHOICES) == {era.value for era in Era} | {"modern"}
    assert Era("modern") is Era.STATELESS
