"""The README's "Many servers in one client" example, run as printed beside the README's notes.py."""

from __future__ import annotations

from pathlib import Path

from test_readme import readme_files, run_from_elsewhere


def test_the_group_example_runs_as_printed(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    for name, code in readme_files().items():
        (app / name).write_text(code, encoding="utf-8")
    done = run_from_elsewhere(app / "group_client.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['search_tools', 'work.add_note']",
        "down",
        "buy milk",
        "['work.add_note']",
    ]
