"""``prb collect`` in a real browser (Debian's Chromium driven by Playwright): a
participant fills the profile, answers with the keyboard, reloads mid-way, goes back
to change an answer and finishes; the file validates and ``personalized_custom`` runs
on it through ``prb eval`` with the fake judge server.

Needs ``/usr/bin/chromium`` (``.ci/run`` installs it) and the ``playwright`` driver
(the ``dev`` extra; no browser download: the driver launches Debian's binary). The
screenshots stay in the test's temporary folder (copied to ``$PRB_COLLECT_SCREENSHOTS``
when set) for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("flask")
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="Debian's chromium is not installed")]

from prb_tasks.data.custom.reader import read_users  # noqa: E402
from prb_tasks.testing.fake_server import FakeLLMServer, always  # noqa: E402
from tests.collect_fixture import HOSTILE, PAIRS, serve, write_pairs  # noqa: E402
from tests.runner import metric, read_results, read_samples, run_cli  # noqa: E402


def test_a_participant_answers_by_keyboard_reloads_changes_an_answer_and_finishes(tmp_path: Path) -> None:
    out = tmp_path / "prefs.json"
    server = serve(write_pairs(tmp_path), out, "--participants", "ana,ben")
    shots = tmp_path / "screenshots"
    try:
        with sync_api.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            problems: list[str] = []
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.on("dialog", lambda dialog: (problems.append(f"dialog {dialog.message}"), dialog.dismiss()))

            def at(position: int) -> None:
                page.wait_for_url(f"**/pair/{position}")
                page.wait_for_load_state("load")  # the shortcut script is loaded

            page.goto(server.links["ana"])
            page.wait_for_url("**/profile")
            page.select_option("#f-age_group", "25-34")
            page.click("#f-region")
            page.keyboard.type("Lisbon")
            page.fill("#f-interests", "chess, cooking")
            page.screenshot(path=str(shots / "1-profile.png"))
            page.keyboard.press("Enter")  # submits the profile form

            at(1)
            page.keyboard.press("a")
            page.keyboard.press("3")  # third value tag: brevity
            page.keyboard.press("r")
            page.keyboard.type("straight to the point")  # letters typed here pick nothing
            page.keyboard.press("Escape")
            assert page.is_checked("#choice-left") and not page.is_checked("#choice-right")
            page.screenshot(path=str(shots / "2-answer.png"))
            page.keyboard.press("Enter")

            at(2)  # the hostile pair: shown as text, nothing runs
            assert HOSTILE in page.inner_text("#prompt") and HOSTILE in page.inner_text("#answer-left, #answer-right")
            assert page.title() == "Pair 2 of 4" and page.locator("#prompt script, #prompt img").count() == 0
            assert page.inner_text("#progress-text") == "1 of 4 answered"
            page.keyboard.press("b")
            page.keyboard.press("Enter")

            at(3)
            page.keyboard.press("a")  # chosen but not saved: a reload forgets it and stays here
            page.reload()
            at(3)
            assert not page.is_checked("#choice-left") and page.inner_text("#progress-text") == "2 of 4 answered"
            third_right = page.inner_text("#text-right")
            page.keyboard.press("b")
            page.keyboard.press("Enter")

            at(4)
            page.keyboard.press("Backspace")  # back to change the last answer
            at(3)
            assert page.is_checked("#choice-right")
            third_left = page.inner_text("#text-left")
            page.keyboard.press("a")
            page.keyboard.press("r")
            page.keyboard.type("on second thought, practice beats reading")
            page.keyboard.press("Control+Enter")  # saves from inside the text box

            at(4)
            page.keyboard.press("n")  # no preference: recorded, not evaluated
            page.keyboard.press("Enter")
            page.wait_for_url("**/done")
            assert "All 4 pairs are answered" in page.inner_text("#done")
            assert page.get_attribute("#progress", "value") == "4"
            page.screenshot(path=str(shots / "3-done.png"))
            browser.close()
        assert not problems, problems
    finally:
        server.stop()
        if os.environ.get("PRB_COLLECT_SCREENSHOTS") and shots.is_dir():
            shutil.copytree(shots, os.environ["PRB_COLLECT_SCREENSHOTS"], dirs_exist_ok=True)

    proc = run_cli(["data", "validate", str(out)], cwd=tmp_path)
    assert proc.returncode == 0 and "users: 1 " in proc.stdout and "preferences: 3 " in proc.stdout, proc.stdout
    (user,) = read_users(out)
    assert user.user_id == "ana" and user.demographics == {"age_group": "25-34", "region": "Lisbon",
                                                           "interests": "chess, cooking"}
    egg, hostile, python = user.preferences
    assert egg.reason == "straight to the point" and egg.value_alignment == ["brevity"]
    assert python.chosen == third_left != third_right and python.reason.startswith("on second thought")
    record = json.loads(out.read_text(encoding="utf-8"))[0]
    assert [p["pair_id"] for p in record["no_preference"]] == ["tea"]
    assert {egg.prompt, hostile.prompt, python.prompt} == {p["prompt"] for p in PAIRS[:3]}

    # personalized_custom end to end on the collected file, judged by the fake server.
    runs = tmp_path / "runs"
    with FakeLLMServer(always("A")) as judge:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={judge.openai_base},cache_dir={tmp_path / 'cache'}",
                        "--tasks", "personalized_custom", "--metadata", json.dumps({"data_path": str(out)}),
                        "--output_path", str(runs), "--log_samples"], cwd=tmp_path, env={"OPENAI_API_KEY": "sk-fake"})
        sent = judge.stats()["total_requests"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    samples = read_samples(runs, "personalized_custom")
    assert len(samples) == 6 and sent == 6  # three A/B answers, each judged in both orders; "tea" is not asked
    results = read_results(runs)
    assert metric(results, "personalized_custom", "acc") == 0.5  # always "A": right in exactly one order per pair
    assert metric(results, "personalized_custom", "consistency") == 0.0
    assert f"Data: local file {out}: preferences 3 rows" in proc.stdout
