"""The HTML report in a real headless browser: hostile text in the data and in a judge's
answer renders as text and runs no script.

Needs Debian's ``chromium`` (``.ci/run`` installs it); skipped only where it is absent.
The screenshot is kept in the test's temporary folder (and copied to
``$PRB_REPORT_SCREENSHOT`` when set) for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.conftest import sample_rows, write_layout
from tests.runner import run_cli
from tests.watchdog import run_watched

HOSTILE = ('</script><script>document.body.setAttribute("data-pwned","1")</script>'
           '<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'2\')"><b id="pwned">bold?</b>')
ESCAPED = '&lt;b id="pwned"&gt;bold?&lt;/b&gt;'


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browse(browser: str, url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_watched(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={profile}",
         "--window-size=1280,1000", "--virtual-time-budget=5000", *extra, url],
        capture_output=True, text=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A report over a judge and an RM run on a local copy whose first pair is hostile."""
    root = tmp_path_factory.mktemp("browser")
    rows = {s.config: sample_rows(s.config) for s in SUBSETS}
    first = rows["Art_and_Entertainment"][0]
    first["question"] = "Which camera should I buy? " + HOSTILE
    first["chosen"] = HOSTILE + " " + first["chosen"]
    first["rubric_aspects"][0]["aspect"] = HOSTILE
    data = write_layout(root / "data", rows, "jsonl")
    metadata = json.dumps({"data_dir": str(data)})
    out = root / "runs"
    hostile_reply = always("A")

    def policy(messages, model):  # a judge that answers with markup around its verdict
        return HOSTILE + "\n" + hostile_reply(messages, model)

    with FakeLLMServer(policy, record_requests=False) as server:
        args = f"model=openai/hostile,api_base={server.openai_base},api_key_env=K,cache_dir={root / 'cache'}"
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--tasks", "personalized_rb",
                        "--metadata", metadata, "--limit", "2", "--output_path", str(out / "judge"), "--log_samples"],
                       cwd=root, env={"K": "sk-x"})
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar",
                    "--metadata", metadata, "--limit", "2", "--output_path", str(out / "rm"), "--log_samples"],
                   cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_cli(["compare", str(out), "--out", str(root / "report")], cwd=root)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return root / "report" / "report.html", "art/0"  # pair keys name the row number


def test_hostile_text_is_escaped_in_the_file(report: tuple[Path, str]) -> None:
    html = report[0].read_text(encoding="utf-8")
    assert HOSTILE not in html and "<b id=\"pwned\">" not in html and "onerror=\"document" not in html
    # No asset from the network, and only scripts carrying the report's nonce may run.
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "src=\"http" not in html and "href=\"http" not in html


def test_browser_renders_hostile_text_as_text_and_runs_no_script(report: tuple[Path, str], tmp_path: Path) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    page, key = report
    url = f"{page.as_uri()}#pair={key}"
    dump = browse(browser, url, tmp_path / "profile", "--dump-dom")
    assert dump.returncode == 0, dump.stderr[-2000:]
    dom = dump.stdout
    # Our script ran: it built the pair list and opened the hostile pair from the URL.
    assert f"<h3>Pair {key}</h3>" in dom
    assert 'id="f-count" class="muted">1-6 of 6 pairs<' in dom
    # The hostile markup is shown as text (question, chosen, rubric aspect, judge answers)
    # and none of it became an element or ran.
    detail = dom[dom.index('id="pair-detail"'):]
    assert detail.count(ESCAPED) >= 4, detail[:3000]
    assert '<b id="pwned">' not in dom and 'data-pwned="' not in dom
    assert "<img src=\"x\"" not in dom

    # The disagreement filter: the judge (always A: 1/2 per pair) and the length RM (0 or 1)
    # disagree on the 3 pairs both saw; the RM's other 3 pairs have no second opinion.
    filtered = browse(browser, f"{page.as_uri()}#disagree", tmp_path / "profile", "--dump-dom").stdout
    assert 'id="f-count" class="muted">1-3 of 3 pairs<' in filtered

    shot = tmp_path / "report.png"
    taken = browse(browser, url, tmp_path / "profile", f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    try:
        from PIL import Image
    except ImportError:
        assert shot.stat().st_size > 30_000
    else:
        with Image.open(shot) as image:
            assert image.size == (1280, 1000)
            assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 50  # not a blank page
    if os.environ.get("PRB_REPORT_SCREENSHOT"):
        shutil.copy(shot, os.environ["PRB_REPORT_SCREENSHOT"])
