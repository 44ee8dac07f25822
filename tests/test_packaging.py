"""The package as published (issue 31 items 29 and 30): a license file matching the metadata, one version the
changelog names, classifiers and project URLs, an install path the README gives, and a lean scripts/serve.
`.ci/run` builds the sdist and wheel, runs `twine check --strict` and installs the wheel in a fresh venv."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import mcpkit

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_license_file_is_the_license_the_metadata_names() -> None:
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")


def test_the_version_is_written_once_and_the_changelog_names_it() -> None:
    assert "version" not in PROJECT and PROJECT["dynamic"] == ["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", mcpkit.__version__)
    assert f"## [{mcpkit.__version__}]" in (ROOT / "CHANGELOG.md").read_text()


def test_the_classifiers_name_every_supported_python_and_the_urls_are_given() -> None:
    oldest = int(PROJECT["requires-python"].removeprefix(">=3."))
    for minor in range(oldest, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in PROJECT["classifiers"]
    assert "Typing :: Typed" in PROJECT["classifiers"] and (ROOT / "src/mcpkit/py.typed").is_file()
    assert {"Source", "Issues", "Changelog"} <= set(PROJECT["urls"])


def test_the_readme_says_how_to_install_before_there_is_a_release() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "not on PyPI yet" in readme
    assert 'pip install -e ".[http]"' in readme and "python -m build" in readme and ".whl[http]" in readme


def test_scripts_serve_sets_up_only_the_http_extra() -> None:
    setup = (ROOT / "scripts/setup").read_text()
    installs = [line for line in setup.splitlines() if "pip install" in line and not line.startswith("#")]
    assert installs[-1].endswith('-e ".[http]"') and "test" not in "".join(installs)
    assert 'scripts/setup"' in (ROOT / "scripts/serve").read_text()
