"""``prb collect``: the journal, the export, and the server over plain HTTP (a real
``prb collect serve`` subprocess: kill -9, restarts, two participants at once, hostile
text, CSRF, body limits). The browser test is tests/e2e/test_collect_browser.py."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("flask")
pytest.importorskip("waitress")

from prb_tasks.collect.journal import JournalError, append_event, replay
from prb_tasks.collect.store import CollectStore
from prb_tasks.common.install_hint import pip_install
from prb_tasks.data.custom.reader import read_users
from tests.collect_fixture import PAIRS, Participant, serve, write_pairs
from tests.runner import run_cli
from tests.watchdog import CEILING_SECONDS, HTTP_BOUND


def answer_event(pair: str, choice: str, left: str = "response_A", reason: str = "") -> dict:
    return {"event": "answer", "pair": pair, "left": left, "choice": choice, "reason": reason, "tags": []}


def test_journal_replays_the_last_answer_per_pair_and_ignores_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "ana.jsonl"
    append_event(path, {"event": "profile", "fields": {"region": "Lisbon"}})
    append_event(path, answer_event("egg", "response_A", reason="first"))
    append_event(path, answer_event("tea", "none"))
    append_event(path, answer_event("egg", "response_B", reason="changed my mind"))
    with path.open("ab") as handle:  # a write cut short by a crash
        handle.write(b'{"event": "answer", "pair": "python", "le')
    state = replay(path)
    assert state.profile == {"region": "Lisbon"}
    assert state.answers["egg"].choice == "response_B" and state.answers["egg"].reason == "changed my mind"
    assert state.answers["tea"].choice == "none"
    assert "python" not in state.answers and state.torn_tail

    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:20]  # damage inside the file is not a torn write: stop and say where
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(JournalError, match=r"ana.jsonl line 2 is damaged"):
        replay(path)


def test_answers_export_in_file_order_with_the_shown_order_mapped_back(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    out = tmp_path / "prefs.json"
    server = serve(pairs, out, "--participants", "ana")
    try:
        ana = Participant(server.links["ana"])
        page = ana.profile(age_group="25-34", region="Lisbon", interests="chess")
        shown = []
        for side, tags in (("left", ("brevity",)), ("right", ()), ("none", ()), ("left", ("accuracy", "nonsense"))):
            left = re.search(r'id="text-left">(.*?)</span>', page, re.S).group(1)
            right = re.search(r'id="text-right">(.*?)</span>', page, re.S).group(1)
            shown.append((left, right))
            page = ana.answer(side, reason=f"reason {len(shown)}", tags=tags)
        assert "All 4 pairs are answered" in page
    finally:
        server.stop()
    users = read_users(out)  # the loader personalized_custom uses accepts the file
    assert [u.user_id for u in users] == ["ana"]
    assert users[0].demographics == {"age_group": "25-34", "region": "Lisbon", "interests": "chess"}
    prefs = json.loads(out.read_text(encoding="utf-8"))[0]
    # "No preference" (the third pair) is recorded apart and never evaluated.
    assert [p["pair_id"] for p in prefs["preferences"]] == ["egg", "hostile", "tea"]
    assert [p["pair_id"] for p in prefs["no_preference"]] == ["python"]
    store = CollectStore.open(out)
    for pref, (left, right), side in zip(prefs["preferences"], [shown[0], shown[1], shown[3]],
                                         ("left", "right", "left")):
        original = next(p for p in PAIRS if p["id"] == pref["pair_id"])
        # The file's response_A/B are kept whatever side they were shown on.
        assert (pref["response_A"], pref["response_B"]) == (original["response_A"], original["response_B"])
        assert pref["shown_left"] == store.left_of("ana", pref["pair_id"])
        picked_text = left if side == "left" else right
        assert original[pref["chosen_response"]].replace("&", "&amp;").replace("<", "&lt;").replace(
            ">", "&gt;").replace('"', "&#34;").replace("'", "&#39;") == picked_text
    assert prefs["preferences"][0]["value_alignment"] == ["brevity"]
    assert prefs["preferences"][2]["value_alignment"] == ["accuracy"]  # tags outside the list are dropped
    left_sides = {store.left_of(name, p["id"]) for name in ("ana", "ben", "cy", "dee") for p in PAIRS}
    assert left_sides == {"response_A", "response_B"}
    assert not list(tmp_path.glob(".prefs.json.*.tmp"))  # atomic writes leave no temporary file


def test_kill_9_between_two_answers_loses_nothing_and_a_restart_resumes(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    out = tmp_path / "prefs.jsonl"
    first = serve(pairs, out, "--participants", "ana,ben")
    ana = Participant(first.links["ana"])
    ana.profile(region="Oslo")
    ana.answer("left", reason="one")
    ana.answer("right", reason="two")
    first.kill9()
    assert len(replay(CollectStore.open(out).journal_path("ana")).answers) == 2
    assert [len(u.preferences) for u in read_users(out)] == [2]  # the export was current before the kill

    second = serve(pairs, out, "--participants", "ana,ben", "--seed", "7")
    try:
        assert any("it keeps the seed it started with (--seed ignored" in line for line in second.banner)
        # The same private links still work (the port may differ) and resume at the third pair.
        assert {n: link.split("/p/")[1] for n, link in second.links.items()} == \
            {n: link.split("/p/")[1] for n, link in first.links.items()}
        assert any("ana: " in line and "(2/4 answered)" in line for line in second.banner)
        again = Participant(second.links["ana"])
        page = again.get()
        assert again.url.endswith("/pair/3") and "2 of 4 answered" in page
        again.answer("left", reason="three")
    finally:
        second.stop()
    proc = run_cli(["collect", "export", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "1 users, 3 preferences;" in proc.stdout and "ben (not started)" in proc.stdout
    assert [p.reason for p in read_users(out)[0].preferences] == ["one", "two", "three"]
    status = run_cli(["collect", "status", str(out)], cwd=tmp_path)
    rows = {line.split()[0]: line.split() for line in status.stdout.splitlines()[2:]}
    assert rows["ana"][1:5] == ["yes", "3/4", "3", "0"] and rows["ben"][1:5] == ["no", "0/4", "0", "0"]


def test_two_participants_at_once_never_see_or_overwrite_each_other(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    out = tmp_path / "prefs.json"
    server = serve(pairs, out, "--participants", "ana,ben")
    pages: dict[str, list[str]] = {"ana": [], "ben": []}
    errors: list[BaseException] = []

    def walk(name: str) -> None:
        try:
            person = Participant(server.links[name])
            pages[name].append(person.profile(region=f"home-of-{name}"))
            for i in range(len(PAIRS)):
                pages[name].append(person.answer("left" if name == "ana" else "right", reason=f"{name}-secret-{i}"))
            for position in range(1, len(PAIRS) + 1):  # reread every answered pair
                pages[name].append(person.get(person.link + f"pair/{position}"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=walk, args=(n,)) for n in ("ana", "ben")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=CEILING_SECONDS)
        assert not errors, errors
        for name, other in (("ana", "ben"), ("ben", "ana")):
            seen = "".join(pages[name])
            assert f"{name}-secret-3" in seen and f"{other}-secret" not in seen and f"home-of-{other}" not in seen
        # One participant's form token is refused on another's link.
        ana, ben = Participant(server.links["ana"]), Participant(server.links["ben"])
        ana.get(ana.link + "pair/1")
        ben.get(ben.link + "pair/1")
        with pytest.raises(urllib.error.HTTPError) as refused:
            ben.post("pair/1", [("choice", "left"), ("reason", "forged")], csrf=ana.csrf())
        assert refused.value.code == 403
        with pytest.raises(urllib.error.HTTPError) as unknown:
            Participant(server.links["ana"].replace("/p/", "/p/x")).get()
        assert unknown.value.code == 404
    finally:
        server.stop()
    users = {u.user_id: u for u in read_users(out)}
    assert {p.reason for p in users["ana"].preferences} == {f"ana-secret-{i}" for i in range(4)}
    assert {p.reason for p in users["ben"].preferences} == {f"ben-secret-{i}" for i in range(4)}
    assert users["ana"].demographics == {"region": "home-of-ana"}


def test_hostile_text_is_escaped_and_forms_are_guarded(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    out = tmp_path / "prefs.json"
    server = serve(pairs, out)
    try:
        person = Participant(server.links["p1"])
        person.profile()
        person.answer("left")
        page = person.page
        assert "<script>" not in page and "&lt;script&gt;document.title=" in page and "onerror=" not in page.replace(
            "&lt;img src=x onerror=", "")
        with urllib.request.urlopen(server.links["p1"], timeout=HTTP_BOUND) as reply:
            policy = reply.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        for data, headers, code in (
            (b"choice=left", {}, 403),  # no form token
            (f"csrf={person.csrf()}&choice=left".encode(), {"Origin": "http://evil.example"}, 403),
            (f"csrf={person.csrf()}&choice=left&reason=".encode() + b"x" * 40_000, {}, 413),
        ):
            request = urllib.request.Request(person.link + "pair/2", data=data, headers=headers)
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=HTTP_BOUND)
            assert refused.value.code == code
        assert len(replay(CollectStore.open(out).journal_path("p1")).answers) == 1
    finally:
        server.stop()


def test_listening_beyond_this_machine_says_so(tmp_path: Path) -> None:
    server = serve(write_pairs(tmp_path), tmp_path / "prefs.json", "--host", "0.0.0.0")
    server.stop()
    assert any("WARNING: listening on 0.0.0.0: anyone who can reach this machine and has a link can answer" in line
               for line in server.banner)


def test_user_mistakes_are_one_line(tmp_path: Path) -> None:
    pairs = write_pairs(tmp_path)
    bad = tmp_path / "bad.jsonl"
    cases = {
        "same text": ({"prompt": "q", "response_A": "x", "response_B": "x "}, "bad pair in"),
        "missing answer": ({"prompt": "q", "response_A": "x"}, "row 1: no 'response_B'"),
        "blank prompt": ({"prompt": " ", "response_A": "x", "response_B": "y"}, "field 'prompt'"),
    }
    for row, expected in cases.values():
        bad.write_text(json.dumps(row) + "\n", encoding="utf-8")
        proc = run_cli(["collect", "serve", str(bad), "--out", str(tmp_path / "x.json")], cwd=tmp_path)
        assert proc.returncode == 2 and expected in proc.stderr \
            and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for args, expected in (
        (["serve", str(pairs), "--out", str(tmp_path / "x.csv")], "name a .json or .jsonl file"),
        (["serve", str(pairs), "--out", str(tmp_path / "x.json"), "--participants", "ana,../ben"], "participant name"),
        (["serve", str(pairs), "--out", str(tmp_path / "x.json"), "--form", str(pairs)], "form file"),
        (["serve", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "x.json")], "nope.jsonl"),
        (["serve", str(pairs), "--out", str(pairs)], "already exists and no collection started it"),
        (["status", str(tmp_path / "never.json")], "no collection for"),
        (["status", str(tmp_path / "prefs.collect")], "give the .json or .jsonl file"),
        (["export", str(tmp_path / "never.json")], "no collection for"),
    ):
        proc = run_cli(["collect", *args], cwd=tmp_path)
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr

    out = tmp_path / "prefs.json"
    server = serve(pairs, out)
    try:  # a second server on the same collection would interleave two journals' writers
        proc = run_cli(["collect", "serve", str(pairs), "--out", str(out)], cwd=tmp_path)
        assert proc.returncode == 2 and "another `prb collect serve` is using" in proc.stderr
    finally:
        server.stop()
    changed = write_pairs(tmp_path / "other", PAIRS[:2]) if (tmp_path / "other").mkdir() is None else None
    proc = run_cli(["collect", "serve", str(changed), "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 2 and "differs from the pairs this collection started with" in proc.stderr


def test_without_the_collect_extra_one_line_says_what_to_install(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked" / "flask"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('flask is not installed')\n", encoding="utf-8")
    import os

    path = os.pathsep.join([str(tmp_path / "blocked"), os.environ.get("PYTHONPATH", "")])
    proc = run_cli(["collect", "serve", str(write_pairs(tmp_path)), "--out", str(tmp_path / "p.json")],
                   cwd=tmp_path, env={"PYTHONPATH": path})
    assert proc.returncode == 2
    with contextlib.chdir(tmp_path):  # the hint names the checkout as seen from where prb ran
        hint = pip_install("collect")
    assert proc.stderr.strip() == f"prb collect: the web app needs Flask and waitress: {hint}"


@pytest.mark.slow  # imports litellm in the server process (~20 s here)
def test_generate_writes_both_answers_through_litellm_once_and_keeps_them(tmp_path: Path) -> None:
    from prb_tasks.testing.fake_server import FakeLLMServer

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"id": f"q{i}", "prompt": f"Question {i}?"}) + "\n" for i in range(3)),
                       encoding="utf-8")
    out = tmp_path / "prefs.json"

    def policy(messages, model):  # type: ignore[no-untyped-def]
        return f"{model} answers: {messages[-1]['content']}"

    with FakeLLMServer(policy) as llm:
        args = ["--generate", "openai/alpha,openai/beta", "--model-args",
                f"api_base={llm.openai_base},transport=litellm,cache_dir={tmp_path / 'cache'}"]
        server = serve(prompts, out, *args)
        try:
            person = Participant(server.links["p1"])
            person.profile()
            person.answer("left")
        finally:
            server.stop()
        sent = llm.stats()["total_requests"]
        server = serve(prompts, out, *args)  # resumes with the same pairs, asks nothing again
        server.stop()
        assert llm.stats()["total_requests"] == sent == 6
    (pref,) = read_users(out)[0].preferences
    assert pref.response_A == "alpha answers: Question 0?" and pref.response_B == "beta answers: Question 0?"
    proc = run_cli(["collect", "serve", str(prompts), "--out", str(tmp_path / "x.json"), "--generate", "one-model"],
                   cwd=tmp_path)
    assert proc.returncode == 2 and "give two litellm models" in proc.stderr


def test_a_custom_form_sets_the_profile_fields_and_the_value_tags(tmp_path: Path) -> None:
    form = tmp_path / "form.yaml"
    form.write_text("profile:\n"
                    "  - {name: team, label: Your team, type: choice, choices: [support, research], required: true}\n"
                    "  - {name: years, label: Years in the job}\n"
                    "value_tags: [tone, speed]\n", encoding="utf-8")
    out = tmp_path / "prefs.jsonl"
    server = serve(write_pairs(tmp_path, PAIRS[:1]), out, "--form", str(form))
    try:
        person = Participant(server.links["p1"])
        page = person.profile(years="3")  # the required choice is missing: asked again, nothing saved
        assert "Your team: please answer" in page and 'value="3"' in page
        page = person.profile(team="marketing")  # not one of the choices
        assert "Your team: pick one of the listed options" in page
        page = person.profile(team="research", years="  3  ")
        assert 'value="tone"' in page and 'value="accuracy"' not in page
        person.answer("right", tags=("speed", "tone"))
    finally:
        server.stop()
    (user,) = read_users(out)
    assert user.demographics == {"team": "research", "years": "3"}
    assert user.preferences[0].value_alignment == ["tone", "speed"]  # in the form's order
