"""Helpers for the ``prb collect`` tests: a pairs file, a real ``prb collect serve``
subprocess, and a plain HTTP participant (the browser test drives Chromium instead)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.testing.browser import CSRF
from tests.watchdog import CEILING_SECONDS, HTTP_BOUND, communicate_watched

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned2\'">'

PAIRS = [
    {"id": "egg", "prompt": "How long should I boil an egg for a runny yolk?",
     "response_A": "Six minutes in boiling water, then cold water.",
     "response_B": "Eggs have been boiled for centuries; timings vary by altitude, size and taste."},
    {"id": "hostile", "prompt": f"Is this safe to paste? {HOSTILE}",
     "response_A": "<b>No</b> & never run code you do not understand.",
     "response_B": f"Yes, paste it: {HOSTILE}"},
    {"id": "python", "prompt": "Best way to learn Python?",
     "response_A": "Write a small program every day.",
     "response_B": "Read the whole language reference first."},
    {"id": "tea", "prompt": "Green or black tea in the evening?",
     "response_A": "Green: usually less caffeine.",
     "response_B": "Black, with milk."},
]


def write_pairs(folder: Path, pairs: list[dict] | None = None) -> Path:
    """Write a PAIRS file (``pairs.jsonl``) into ``folder``."""
    path = folder / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in (pairs or PAIRS)), encoding="utf-8")
    return path


@dataclass
class Server:
    """A running ``prb collect serve`` and the links it printed."""

    proc: subprocess.Popen
    links: dict[str, str]
    banner: list[str]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            communicate_watched(self.proc)

    def kill9(self) -> None:
        self.proc.kill()  # SIGKILL: no clean-up runs
        communicate_watched(self.proc)


def serve(pairs: Path, out: Path, *extra: str, cwd: Path | None = None) -> Server:
    """Start ``python -m prb_tasks collect serve PAIRS --out OUT ...`` and wait for its links."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "prb_tasks", "collect", "serve", str(pairs), "--out", str(out),
                             *extra], cwd=cwd or out.parent, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    banner: list[str] = []
    links: dict[str, str] = {}
    deadline = time.monotonic() + CEILING_SECONDS  # readline() blocks: this bounds a banner that never ends
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError("prb collect serve stopped:\n" + "".join(banner))
        banner.append(line)
        found = re.match(r"\s+(\S+): (http://\S+/p/\S+/)", line)
        if found:
            links[found.group(1)] = found.group(2)
        if line.startswith("Send each person"):
            return Server(proc, links, banner)
    proc.kill()
    raise AssertionError(f"no links within {CEILING_SECONDS:g} s:\n" + "".join(banner))


class Participant:
    """A participant answering over plain HTTP, as a browser's forms would."""

    def __init__(self, link: str) -> None:
        self.link = link
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.url = link
        self.page = ""

    def get(self, url: str | None = None) -> str:
        with self.opener.open(url or self.link, timeout=HTTP_BOUND) as reply:
            self.url, self.page = reply.geturl(), reply.read().decode("utf-8")
        return self.page

    def csrf(self) -> str:
        return CSRF.search(self.page).group(1)

    def post(self, path: str, fields: list[tuple[str, str]], csrf: str | None = None) -> str:
        data = urllib.parse.urlencode([("csrf", csrf or self.csrf()), *fields]).encode()
        target = urllib.parse.urljoin(self.link, path)
        with self.opener.open(urllib.request.Request(target, data=data), timeout=HTTP_BOUND) as reply:
            self.url, self.page = reply.geturl(), reply.read().decode("utf-8")
        return self.page

    def profile(self, **fields: str) -> str:
        self.get()
        return self.post(urllib.parse.urlparse(self.url).path, list(fields.items()))

    def answer(self, side: str, reason: str = "", tags: tuple[str, ...] = ()) -> str:
        """Answer the pair on the current page (``left``, ``right`` or ``none``)."""
        path = urllib.parse.urlparse(self.url).path
        return self.post(path, [("choice", side), ("reason", reason), *[("tag", t) for t in tags]])
