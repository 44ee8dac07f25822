"""The inspector's page in Debian's chromium (headless, driven over the DevTools protocol): the views a
developer uses, against examples/everything.py and a server whose every string is HTML and script.

Screenshots of the main views go to $MCPKIT_SCREENSHOTS (default: the test's temporary directory)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cdp import Browser
from inspector.harness import EVERYTHING, HOSTILE, Inspector, inspector
from inspector.page import click, fill, open_page, q, shows

MARK = "<img src=x onerror=\"window.pwned='img'\"><script>window.pwned='script'</script><b>bold</b>"


@pytest.fixture(scope="module")
def everything_inspector() -> Iterator[Inspector]:
    with inspector(f"{sys.executable} {EVERYTHING}") as found:
        yield found


@pytest.fixture
def everything(browser: Browser, everything_inspector: Inspector) -> Browser:
    """The browser on the page of the inspector for examples/everything.py (opened again after a test
    that used another inspector)."""
    if browser.evaluate("location.href") != everything_inspector.url:
        open_page(browser, everything_inspector)
    return browser


def test_the_server_view_shows_info_era_and_capabilities(everything: Browser, shots: Path) -> None:
    shows(everything, "mcpkit everything demo")
    shows(everything, "2026-07-28")
    everything.screenshot(shots / "server.png")


def test_a_tool_called_through_its_form_shows_progress_then_the_result(
    everything: Browser, shots: Path
) -> None:
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=slow]")
    fill(everything, "input[aria-label=seconds]", "3")
    click(everything, "form.tool button[type=submit]")
    everything.wait_for(f"{q('.progress')}?.innerText.includes('/ 10')")
    everything.screenshot(shots / "tool-progress.png")
    shows(everything, "waited 3.0 seconds", timeout=20)
    click(everything, "[data-tool=add]")
    fill(everything, "input[aria-label=a]", "2")
    fill(everything, "input[aria-label=b]", "40")
    click(everything, "form.tool button[type=submit]")
    shows(everything, "structuredContent")
    everything.wait_for(f"{q('.structured pre')}?.textContent.includes('42')")
    everything.screenshot(shots / "tool-result.png")


def test_every_content_type_is_rendered(everything: Browser) -> None:
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=media]")
    click(everything, "form.tool button[type=submit]")
    everything.wait_for(f"{q('.result img.media')}?.src.startsWith('data:image/png;base64,')")
    everything.wait_for(f"{q('.result audio')}?.src.startsWith('data:audio/wav;base64,')")
    shows(everything, "demo://readme")
    shows(everything, "inline resource text")


def test_an_elicitation_is_answered_in_the_page(everything: Browser, shots: Path) -> None:
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=book_table]")
    fill(everything, "input[aria-label=restaurant]", "Zum")
    click(everything, "form.tool button[type=submit]")
    everything.wait_for(f"{q('form.ask')} !== null")
    fill(everything, "form.ask input[aria-label=guests]", "3")
    fill(everything, "form.ask select[aria-label=confirm]", "true")
    everything.screenshot(shots / "elicitation.png")
    click(everything, "form.ask button[type=submit]")
    shows(everything, "Booked Zum for 3.")
    assert everything.evaluate(f"{q('form.ask')} === null")


def test_a_sampling_request_is_answered_by_hand(everything: Browser) -> None:
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=summarize]")
    fill(everything, "input[aria-label=topic]", "tea")
    click(everything, "form.tool button[type=submit]")
    shows(everything, "Summarise tea in one line.")
    fill(everything, "form.ask textarea[aria-label=reply]", "Tea: leaves in hot water.")
    click(everything, "form.ask button[type=submit]")
    shows(everything, "Tea: leaves in hot water.")


def test_resources_and_templates_with_completion_are_read(everything: Browser, shots: Path) -> None:
    click(everything, "[data-tab=resources]")
    click(everything, '[data-uri="demo://readme"]')
    shows(everything, "A static resource.")
    fill(everything, "form.template input[name=note_id]", "1")
    everything.wait_for("document.querySelector('form.template datalist')?.options.length > 0")
    fill(everything, "form.template input[name=note_id]", "7")
    click(everything, "form.template button[type=submit]")
    shows(everything, "Note number 7")
    everything.screenshot(shots / "resources.png")


def test_a_prompt_is_got_with_its_arguments(everything: Browser) -> None:
    click(everything, "[data-tab=prompts]")
    click(everything, "[data-prompt=greet]")
    fill(everything, "form.prompt input[name=name]", "Ann")
    click(everything, "form.prompt button[type=submit]")
    shows(everything, "Write a friendly greeting for Ann.")


def test_the_log_shows_messages_both_ways_filters_and_copies(everything: Browser, shots: Path) -> None:
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=echo]")
    fill(everything, "input[data-path=text]", "logged")
    click(everything, "form.tool button[type=submit]")
    everything.wait_for(f"{q('#tab-tools .result')}?.innerText.includes('logged')")
    click(everything, "[data-tab=log]")
    everything.wait_for("document.querySelectorAll('#log-list .entry').length > 3")
    answered = r"/result #\d+ \(tools\/call, \d+ ms\)/"  # an answer names its request and its time
    labels = "[...document.querySelectorAll('#log-list .label')]"
    everything.wait_for(f"{labels}.some(e => {answered}.test(e.textContent))")
    everything.evaluate("document.querySelector('#log-list .entry.message').open = true")
    everything.screenshot(shots / "log.png")
    total = everything.evaluate("document.querySelectorAll('#log-list .entry').length")
    fill(everything, "input[aria-label=filter]", "logged")
    entries = "[...document.querySelectorAll('#log-list .entry')]"
    everything.wait_for(f"{entries}.length < {total}")
    assert everything.evaluate(f"{entries}.every(e => e.textContent.includes('logged'))")
    fill(everything, "select[aria-label=direction]", "in")
    everything.wait_for(f"{entries}.every(e => e.querySelector('.arrow').textContent !== '→')")
    assert everything.evaluate(f"{entries}.length") >= 1  # the answer to the call
    fill(everything, "select[aria-label=direction]", "all")
    fill(everything, "input[aria-label=filter]", "")


def test_roots_edited_in_the_page_are_what_the_server_lists(everything: Browser) -> None:
    click(everything, "[data-tab=roots]")
    roots = '[{"uri": "file:///srv/shared", "name": "shared"}]'
    fill(everything, "textarea[aria-label=roots]", roots)
    click(everything, "#tab-roots button.primary")
    shows(everything, "the server was told the roots changed")
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=list_client_roots]")
    click(everything, "form.tool button[type=submit]")
    everything.wait_for(f"{q('#tab-tools .structured pre')}?.textContent.includes('file:///srv/shared')")


def test_the_page_fits_a_phone_in_dark_mode(everything: Browser, shots: Path) -> None:
    everything.emulate(390, 844, dark=True, mobile=True)
    try:
        click(everything, "[data-tab=tools]")
        click(everything, "[data-tool=echo]")
        width = everything.evaluate("document.documentElement.scrollWidth")
        assert width <= 400
        background = everything.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(15, 17, 21)"
        everything.screenshot(shots / "phone-dark.png")
    finally:
        everything.emulate(1280, 900)


def test_the_page_threw_no_errors(everything: Browser) -> None:
    assert everything.errors() == []


def test_a_task_is_started_polled_and_cancelled(browser: Browser, shots: Path) -> None:
    with inspector(f"{sys.executable} {HOSTILE}") as found:
        open_page(browser, found)
        click(browser, "[data-tab=tools]")
        click(browser, "[data-tool=long_job]")
        fill(browser, "input[aria-label=seconds]", "30")
        browser.evaluate("document.getElementById('as-task').checked = true")
        click(browser, "form.tool button[type=submit]")
        shows(browser, "task started")
        click(browser, "[data-tab=tasks]")
        browser.wait_for(f"{q('.task .status-working')} !== null")
        click(browser, ".task button:nth-of-type(1)")  # Poll
        browser.screenshot(shots / "tasks.png")
        click(browser, ".task button:nth-of-type(3)")  # Cancel
        browser.wait_for(f"{q('.task .status-cancelled')} !== null")


def test_html_from_the_server_is_shown_as_text_and_never_runs(browser: Browser, shots: Path) -> None:
    with inspector(f"{sys.executable} {HOSTILE}") as found:
        open_page(browser, found)
        shows(browser, MARK)  # the server's name and instructions, as typed
        click(browser, "[data-tab=tools]")
        browser.wait_for("document.querySelectorAll('[data-tool]').length === 4")
        click(browser, "[data-tool^=evil]")
        fill(browser, "input[aria-label=text]", "!")
        click(browser, "form.tool button[type=submit]")
        shows(browser, MARK + "!")
        click(browser, "[data-tab=log]")
        browser.wait_for("document.querySelectorAll('#log-list .entry.log').length > 0")
        shows(browser, MARK)
        browser.screenshot(shots / "hostile.png")
        assert browser.evaluate("window.pwned === undefined")
        assert (
            browser.evaluate("document.querySelectorAll('img[src=x], script:not([src]), b:not(.req)').length")
            == 0
        )


def test_a_url_elicitation_shows_its_url_and_takes_the_answer(everything: Browser) -> None:
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=connect_account]")
    fill(everything, "input[aria-label=service]", "git")
    click(everything, "form.tool button[type=submit]")
    everything.wait_for(f"{q('form.ask .url')}?.textContent === 'https://example.com/connect/git'")
    click(everything, "form.ask button.primary")
    shows(everything, "URL elicitation answered: accept")


def test_a_call_is_copied_as_an_mcpkit_command_line(everything: Browser) -> None:
    everything.evaluate("navigator.clipboard.writeText = async (text) => { window.copied = text; }")
    click(everything, "[data-tab=tools]")
    click(everything, "[data-tool=add]")
    fill(everything, "input[data-path=a]", "2")
    fill(everything, "input[data-path=b]", "40")
    click(everything, "form.tool .actions button.small")
    copied = everything.wait_for("window.copied")
    assert copied.startswith("mcpkit call ") and copied.endswith(' add --args \'{"a":2,"b":40}\'')
    assert "everything.py" in copied


def test_nested_objects_arrays_enums_and_optionals_have_form_fields(browser: Browser) -> None:
    with inspector(f"{sys.executable} {HOSTILE}") as found:
        open_page(browser, found)
        click(browser, "[data-tab=tools]")
        click(browser, "[data-tool=configure]")
        fill(browser, "input[data-path=name]", "n")
        fill(browser, "select[data-path=mode]", "1")  # the second enum value
        fill(browser, "input[data-path=ratio]", "0.5")
        for _ in range(2):
            click(browser, "[data-add=tags]")
        fill(browser, "input[data-path='tags[0]']", "a")
        fill(browser, "input[data-path='tags[1]']", "b")
        fill(browser, "input[data-path='origin.x']", "3")
        click(browser, "[data-add=points]")
        fill(browser, "input[data-path='points[0].x']", "7")
        origin_y = q("input[data-path='origin.y']")
        assert browser.evaluate(f"{origin_y}.value") == "0"  # the default
        click(browser, "form.tool button[type=submit]")
        browser.wait_for(f"{q('.structured pre')} !== null")
        shown = json.loads(browser.evaluate(f"{q('.structured pre')}.textContent"))
        assert shown == {
            "name": "n",
            "mode": "safe",
            "ratio": 0.5,
            "tags": ["a", "b"],
            "origin": {"x": 3, "y": 0},
            "points": [{"x": 7, "y": 0}],
            "verbose": False,
            "limit": None,
        }


def test_a_server_that_exits_shows_as_disconnected_with_the_reason(browser: Browser) -> None:
    with inspector(f"{sys.executable} {HOSTILE}") as found:
        open_page(browser, found)
        click(browser, "[data-tab=tools]")
        click(browser, "[data-tool=exit_now]")
        click(browser, "form.tool button[type=submit]")
        browser.wait_for("document.getElementById('status').textContent.includes('closed the connection')")
