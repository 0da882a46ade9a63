"""The HTML report in Chromium at 1400 and 420 px: the page body never scrolls sideways,
charts and tables stay inside the page, and the drill-down of your own data shows what
the judge was shown, the user's demographics and the reason behind the held-out choice.

Needs Debian's ``chromium`` (``.ci/run`` installs it); skipped only where it is absent.
Screenshots are kept in the test's folder (and copied to ``$PRB_REPORT_SCREENSHOT_DIR``
when set) for a person to look at.
"""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path

import pytest

from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.custom.sources import example_path
from tests.e2e.test_compare_browser import chromium
from tests.report_fixture import write_run
from tests.runner import run_cli
from tests.watchdog import run_watched

BACKGROUND = (0xFA, 0xFB, 0xFC)  # body background in report.css


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("widths")
    runs = root / "runs"
    half = lambda key: int(key.split("/")[1]) % 2 == 0  # noqa: E731
    for name, model, usd in (("a", "openai/a-rather-long-judge-model-name-2026-11-01", 0.05),
                             ("b", "openai/qwen-local", 0.0), ("c", "anthropic/claude-sonnet-4-5", 1.2)):
        write_run(runs / name, "personalized_rb_sample", "prb-judge", {"model": model}, half, usd=usd)
    write_run(runs / "rm", "personalized_rb_sample_scalar", "prb-rm",
              {"pretrained": "./tinyrm", "protocol": "official"}, half)
    users = read_users(example_path())
    keys = [f"{u.user_id}/{i}" for u in users for i in range(len(u.preferences))]
    sample = {"kind": "sample", "location": "example", "subset": "preferences", "rows": len(keys)}
    write_run(runs / "custom", "personalized_custom_example", "prb-judge", {"model": "openai/j"}, half, usd=0.0,
              source=sample, keys=keys)
    proc = run_cli(["compare", str(runs), "--out", str(root / "report")], cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root / "report" / "report.html"


def _probe(page: Path, folder: Path) -> Path:
    """A copy of the page with a script (under the page's own nonce) that records how far the
    document is wider than the window, and opens a pair of your own data."""
    html = page.read_text(encoding="utf-8")
    nonce = re.search(r"script-src 'nonce-([^']+)'", html).group(1)
    # The pair list (and the section select's options) is built when the reader scrolls to
    # it, which headless Chromium does before "load" only now and then; a #pair=KEY address
    # builds it at once and opens that pair, the page's widest state. Wait for its rows all
    # the same. Besides the overflow, name the elements that stick out past the window
    # outside any scrolling box, so that a failure says what to fix.
    script = ('window.addEventListener("load", function () { var tries = 0; '
              '(function measure() { var rows = document.querySelectorAll("#pair-list tbody tr").length; '
              'if (!rows && tries++ < 50) { setTimeout(measure, 100); return; } '
              'var d = document.documentElement; var out = []; var all = document.querySelectorAll("body *"); '
              'for (var i = 0; i < all.length; i++) { var clipped = false; '
              'for (var a = all[i].parentElement; a; a = a.parentElement) { '
              'if (getComputedStyle(a).overflowX !== "visible") { clipped = true; break; } } '
              'var r = all[i].getBoundingClientRect(); '
              'if (!clipped && r.right > d.clientWidth + 1) '
              'out.push(all[i].tagName.toLowerCase() + "#" + all[i].id); } '
              'document.body.setAttribute("data-rows", String(rows)); '
              'document.body.setAttribute("data-wide", out.slice(0, 8).join(" ")); '
              'document.body.setAttribute("data-overflow", String(d.scrollWidth - d.clientWidth)); })(); });')
    probe = f'<script nonce="{nonce}">{script}</script>'
    copy = folder / "probe.html"
    copy.write_text(html.replace("</body>", probe + "</body>"), encoding="utf-8")
    return copy


def _browse(browser: str, url: str, profile: Path, width: int, *extra: str):

    return run_watched(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},1600",
         "--virtual-time-budget=8000", *extra, url], capture_output=True, text=True)


@pytest.mark.parametrize("width", [1400, 420])
def test_no_horizontal_overflow(page: Path, tmp_path: Path, width: int) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    probe = _probe(page, tmp_path)
    users = read_users(example_path())
    key = f"{users[0].user_id}/0"
    dump = _browse(browser, f"{probe.as_uri()}#pair={key}", tmp_path / "profile", width, "--dump-dom")
    assert dump.returncode == 0, dump.stderr[-2000:]
    overflow = re.search(r'data-overflow="(-?\d+)"', dump.stdout)
    assert overflow is not None, dump.stdout[:2000]
    assert int(re.search(r'data-rows="(\d+)"', dump.stdout).group(1)) > 0  # measured with the pair list built
    assert f"<h3>Pair {key}</h3>" in dump.stdout  # and that pair open
    wide = re.search(r'data-wide="([^"]*)"', dump.stdout)
    assert int(overflow.group(1)) <= 0, (f"the page is {overflow.group(1)} px wider than a {width} px window; "
                                         f"sticking out: {wide.group(1) if wide else '?'}")
    # Column names are models, not m1..m4.
    assert "<th>m1</th>" not in dump.stdout and "qwen-local</th>" in dump.stdout

    shot = tmp_path / f"report-{width}.png"
    taken = _browse(browser, page.as_uri(), tmp_path / "profile", width, f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        assert rgb.size[0] == width
        # Nothing runs off the right edge: the last columns are the page's own margin.
        edge = {rgb.getpixel((x, y)) for x in range(width - 3, width) for y in range(0, rgb.size[1], 4)}
        assert edge == {BACKGROUND}, sorted(edge)[:5]
        assert len(rgb.getcolors(maxcolors=1 << 20) or []) > 50  # not a blank page
    if os.environ.get("PRB_REPORT_SCREENSHOT_DIR"):
        shutil.copy(shot, os.environ["PRB_REPORT_SCREENSHOT_DIR"])


def test_drilldown_of_your_own_data_shows_what_the_judge_saw(page: Path, tmp_path: Path) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    users = read_users(example_path())
    user = users[0]
    key = f"{user.user_id}/0"
    dump = _browse(browser, f"{page.as_uri()}#pair={key}", tmp_path / "profile", 1400, "--dump-dom")
    detail = dump.stdout[dump.stdout.index('id="pair-detail"'):]
    assert f"<h3>Pair {key}</h3>" in detail
    assert "The user's demographics" in detail
    for name, value in user.demographics.items():
        assert f"<dt>{html.escape(str(name))}</dt><dd>{html.escape(str(value), quote=False)}</dd>" in detail
    reason = user.preferences[0].reason
    assert reason and html.escape(reason, quote=False) in detail
    assert "What the model was shown" in detail and f"EARLIER CHOICES OF {key}" in detail
