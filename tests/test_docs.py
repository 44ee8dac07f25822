"""Every code block of the documentation (README.md and docs/**/*.md) is checked here, by its language
(mkdocs build --strict, in .ci/run, checks the site's links, anchors and API names):

- ```python whose first line names a file (`# notes.py`): saved with the page's other files in a temporary
  directory and run as a script (`python notes.py`, stdin closed) from another directory, as a reader who
  copied them would; it must exit 0 (and print its ```text title="Output" block when one follows). A
  `test_*.py` file is run by pytest (`-p anyio`) in that directory instead, and must pass.
- any other ```python: run in page order in one namespace, top-level await allowed (tests/docs_runner.py),
  beside the page's files; it must not raise (and must print its Output block when one follows).
- ```sh / ```bash: every `mcpkit` command is parsed by the command's own parser, every file it or `python`
  names exists (in the checkout or among the page's files), every extra a `pip install` names is in
  pyproject.toml, every `scripts/` command exists; a program outside the known few fails. A block marked
  `<!-- docs-test: run -->` is also run, command by command, beside the page's files (the venv's `python` and
  `mcpkit` first on PATH): each must exit 0, and together print its Output block when one follows. With
  `run URL=FILE` the commands run in the checkout, FILE started over stdio wherever they name URL (the tour
  of the commerce server, without a port).
- ```json, ```toml, ```yaml: parsed; ```haproxy: `haproxy -c` where haproxy is installed (CI installs it).
- ```text: diagrams and printed output, nothing to run.
Besides: every dotted `mcpkit.` name the pages give in backticks can be imported.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from docs_blocks import ROOT, Block, all_blocks, blocks, commands, extras, named_files, pages
from mcpkit.cli.commands import parser, split_script_args

PAGES = pages()
ALL = all_blocks()
CHECKED = {"python", "sh", "bash", "json", "toml", "yaml", "haproxy", "text"}
# Programs a shell block may name besides mcpkit, python, pip and scripts/: each is someone else's, shown
# as the reader would type it.
OTHER_PROGRAMS = {".", "cd", "uvicorn", "npx", "node", "redis-server", "haproxy", "curl", "mkdocs", "git"}
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}  # this tree's mcpkit, as if installed


def page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def block_id(block: Block) -> str:
    return block.where


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    app.mkdir()
    return app


def write_files(page: Path, into: Path) -> None:
    for name, block in named_files(page).items():
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_text(block.code, encoding="utf-8")


def test_every_block_has_a_language_this_file_checks() -> None:
    assert [b.where for b in ALL if b.lang not in CHECKED] == []


def test_the_pages_have_runnable_examples() -> None:
    assert sum(1 for b in ALL if b.lang == "python") >= 40


@pytest.mark.parametrize("block", [b for b in ALL if b.file_name], ids=block_id)
def test_a_file_example_runs_as_a_script(block: Block, app_dir: Path, tmp_path: Path) -> None:
    write_files(block.page, app_dir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    name = str(block.file_name)
    # a test file is run by pytest, beside the files it imports; any other file as a script, from elsewhere
    is_test = Path(name).name.startswith("test_")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "anyio", name]
        if is_test
        else [sys.executable, str(app_dir / name)],
        cwd=app_dir if is_test else elsewhere,
        env={**ENV, **block.env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{block.where}\n{done.stdout}{done.stderr}"
    if block.output is not None:
        assert done.stdout == block.output, block.where


def snippet_pages() -> list[Path]:
    return [p for p in PAGES if any(b.lang == "python" and not b.file_name for b in blocks(p))]


@pytest.mark.parametrize("page", snippet_pages(), ids=page_id)
def test_a_pages_snippets_run_in_order(page: Path, app_dir: Path) -> None:
    write_files(page, app_dir)
    snippets = [
        {"where": b.where, "prelude": b.prelude, "code": b.code, "output": b.output}
        for b in blocks(page)
        if b.lang == "python" and not b.file_name
    ]
    (app_dir / "snippets.json").write_text(json.dumps(snippets), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "docs_runner.py"), "snippets.json"],
        cwd=app_dir,
        env=ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


def check_mcpkit(args: list[str], files: set[str], where: str) -> None:
    try:
        parser().parse_args(split_script_args(args)[0])  # as main() does: after `--`, the server's own
    except SystemExit as exc:
        pytest.fail(f"{where}: `mcpkit {' '.join(args)}` is refused by the parser ({exc})")
    for arg in args:
        check_file(arg, files, where)


def check_file(arg: str, files: set[str], where: str) -> None:
    """A file named by a command (or inside a quoted command line) exists: a page's file or the checkout's."""
    for piece in arg.split():
        path = piece.split(":")[0]
        if path.endswith(".py"):
            assert path in files or (ROOT / path).exists(), (
                f"{where}: {path} is no page's file, nor in the checkout"
            )


def check_pip(args: list[str], where: str) -> None:
    for arg in args:
        named = re.fullmatch(r"(?:mcpkit|\.)\[([\w,]+)\]", arg.strip("'\""))
        if named:
            assert set(named[1].split(",")) <= extras(), f"{where}: {arg} names an extra pyproject lacks"


def check_command(command: list[str], files: set[str], where: str) -> None:
    program, args = command[0], command[1:]
    base = program.removeprefix(".venv/bin/")
    if base in {"python", "python3"} and args[:2] == ["-m", "mcpkit"]:
        base, args = "mcpkit", args[2:]
    if base in {"python", "python3"} and args[:2] == ["-m", "pip"]:
        base, args = "pip", args[2:]
    if base == "mcpkit":
        check_mcpkit(args, files, where)
    elif base == "pip":
        check_pip(args, where)
    elif base in {"python", "python3"}:
        for arg in args:
            check_file(arg, files, where)
    elif program.startswith("scripts/"):
        assert (ROOT / program).is_file(), f"{where}: {program} does not exist"
    else:
        assert program in OTHER_PROGRAMS, f"{where}: `{program}` is not a program these pages may name"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in {"sh", "bash"}], ids=block_id)
def test_a_shell_block_names_real_commands_files_and_options(block: Block) -> None:
    files = {name for page in PAGES for name in named_files(page)}
    for command in commands(block.code):
        check_command(command, files, block.where)


@pytest.mark.parametrize("block", [b for b in ALL if b.run], ids=block_id)
def test_a_run_shell_block_runs(block: Block, app_dir: Path) -> None:
    write_files(block.page, app_dir)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # the commerce example's database goes to the temporary directory, not the checkout
    env = {**ENV, "PATH": path, "COMMERCE_DB": str(app_dir / "commerce.db")}
    printed = ""
    for command in commands(block.code):
        command = [f"python {ROOT / block.servers[arg]}" if arg in block.servers else arg for arg in command]
        done = subprocess.run(
            command,
            cwd=ROOT if block.servers else app_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{block.where}: {command}\n{done.stdout}{done.stderr}"
        printed += done.stdout
    if block.output is not None:
        assert printed == block.output, block.where


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in {"json", "toml", "yaml"}], ids=block_id)
def test_a_data_block_parses(block: Block) -> None:
    if block.lang == "json":
        json.loads(block.code)
    elif block.lang == "toml":
        tomllib.loads(block.code)
    else:
        yaml.safe_load(block.code)


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "haproxy"], ids=block_id)
def test_a_haproxy_block_is_a_valid_configuration(block: Block, tmp_path: Path) -> None:
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if haproxy is None:
        if os.environ.get("MCPKIT_CI") or os.environ.get("CI"):
            pytest.fail("haproxy is not installed")
        pytest.skip("haproxy is not installed")
    config = tmp_path / "haproxy.cfg"
    config.write_text(block.code, encoding="utf-8")
    done = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{block.where}\n{done.stdout}{done.stderr}"


def exported() -> dict[str, set[str]]:
    """Each name some mcpkit module lists in `__all__` -> the dotted paths of the modules listing it."""
    homes: dict[str, set[str]] = {}
    for path in (ROOT / "src" / "mcpkit").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT / "src").with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                for name in ast.literal_eval(node.value):  # type: ignore[attr-defined]
                    homes.setdefault(name, set()).add(module)
    return homes


# Backquoted words that are someone else's names: asyncio's Task, the DPoP HTTP authentication scheme, the
# HTTP Origin header.
NOT_MCPKIT = {"Task", "DPoP", "Origin", "__version__"}


@pytest.mark.parametrize("page", [p for p in PAGES if "reference" not in p.parts], ids=page_id)
def test_every_mcpkit_name_on_a_page_comes_with_its_import_path(page: Path) -> None:
    """A page naming `Server` or `TaskEngine` says where it is imported from: a dotted path (the name's, or
    its module's beside it) or an import line."""
    text = page.read_text(encoding="utf-8")
    homes = exported()
    used = set(re.findall(r"`([A-Za-z_]\w*)(?=[`(.\[])", text)) & set(homes) - NOT_MCPKIT
    imported = {
        n for line in re.findall(r"from mcpkit[\w.]* import ([^\n]+)", text) for n in re.findall(r"\w+", line)
    }

    def placed(name: str) -> bool:
        dotted = any(
            f"{module}.{name}" in text or f"`{module}`" in text for module in homes[name] - {"mcpkit"}
        )
        return name in imported or f"mcpkit.{name}" in text or dotted

    missing = sorted(name for name in used if not placed(name))
    assert not missing, f"{page_id(page)} names {', '.join(missing)} without an import path"


def test_the_readme_links_to_files_that_exist() -> None:
    """The README is the front page on a forge, outside the site: its relative links are checked here."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    assert [t for t in targets if not (ROOT / t).exists()] == []


DOTTED = re.compile(r"`(mcpkit(?:\.\w+)+)")
NOT_IMPORTS = {"mcpkit.requests"}  # a logger's name


def dotted_names() -> list[str]:
    found = {name for page in PAGES for name in DOTTED.findall(page.read_text(encoding="utf-8"))}
    return sorted(found - NOT_IMPORTS)


def resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("dotted", dotted_names())
def test_a_dotted_name_in_the_pages_can_be_imported(dotted: str) -> None:
    assert resolve(dotted) is not None


@pytest.mark.parametrize(
    "command",
    [
        ["mcpkit", "call", "http://127.0.0.1:8000/mcp"],  # no tool
        ["mcpkit", "serve", "x.py", "--no-such-option"],
        ["mcpkit", "serve", "examples/nothere.py"],
        ["pip", "install", "mcpkit[nosuchextra]"],
        ["scripts/nothere"],
        ["rm", "-rf", "/"],
    ],
)
def test_the_shell_check_refuses_what_is_not_true(command: list[str]) -> None:
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        check_command(command, {"x.py"}, "here")


def test_the_shell_check_reads_continuations_comments_and_chains() -> None:
    code = "A=1 mcpkit list x.py  # a comment\nscripts/serve \\\n  --port 9 && . .venv/bin/activate\n"
    assert commands(code) == [
        ["mcpkit", "list", "x.py"],
        ["scripts/serve", "--port", "9"],
        [".", ".venv/bin/activate"],
    ]
