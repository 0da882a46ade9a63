"""``prb templates official``: prompt files in the authors' placeholder format become
templates whose rendered messages equal the authors' ``str.replace`` byte for byte.

The fixture prompts are our own wording; the authors' files are never part of a test.
"""

from __future__ import annotations

import copy
import http.server
import json
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_tasks.common.errors import PRBError
from prb_tasks.prompts.official_templates import (
    SYSTEM,
    USER,
    fetch,
    read_like_authors,
    system_template,
    user_template,
    write_templates,
)
from prb_tasks.prompts.templates import TemplateRef, render, resolve
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.conftest import sample_rows, write_layout
from tests.runner import run_cli

# Our own wording, in the authors' placeholder format, with everything Jinja could misread.
SYSTEM_FIXTURE = (
    "\n\n  You pick the answer this person would want.  \r\n"
    "Do not mind {{ order }} or {% if length %}length{% endif %}, {# comments #} or `code`.\n"
    "A literal {% endraw %} and {%- endraw -%} and {% raw %} and {%+ endraw +%} stay as they are.\n"
    "{question} is not filled in a system prompt.\n"
    "    Indented line, trailing spaces   \n"
    "  \t{% if indented %} tag after indentation\n"
    "End with `Result: A` or `Result: B`.\n\n\t "
)
USER_FIXTURE = (
    "  {question}\n"
    "{{question}} and {% raw %}{question}{% endraw %}\n"
    "```\n{Response_A}\n```\n"
    "  {#- Response B follows -#}\n"
    "```\n{Response_B}\n```\n"
    "Again, indented:\n   {question}\n"
    "{question}A} ends the text with {Response_B}  \n\n"
)


def authors_user(template_text: str, question: str, a: str, b: str) -> str:
    """The authors' user message: three chained str.replace calls, question first."""
    return template_text.replace("{question}", question).replace("{Response_A}", a).replace("{Response_B}", b)


def loaded(raw: str) -> str:
    return read_like_authors(raw.encode("utf-8"))


def render_user(source: str, question: str, a: str, b: str) -> str:
    ref = TemplateRef(Path("user.jinja"), source)
    return render(ref, question=question, category="c", response_a=a, response_b=b, posts=[], aspects=[])


VALUES = [
    ("What should I cook tonight?", "Pasta with beans.", "A rare steak."),
    ("  {Response_A} in the question\n", " {Response_B} in A \n", "B has {{ x }} and {% raw %}"),
    ("{% endraw %}{{ question }}{# #}", "`{%- if x -%}`", "{question}"),
    ("", "", ""),
    ("ends with {Response_", "A", "\u00a0trailing\u3000"),
]


def test_loader_reads_like_the_authors():
    assert loaded(SYSTEM_FIXTURE).startswith("You pick") and loaded(SYSTEM_FIXTURE).endswith("`Result: B`.")
    assert "\r" not in loaded(SYSTEM_FIXTURE)
    assert loaded(USER_FIXTURE).startswith("{question}") and loaded(USER_FIXTURE).endswith("{Response_B}")


def test_system_prompt_is_rendered_unchanged():
    text = loaded(SYSTEM_FIXTURE)
    assert render(TemplateRef(Path("system.jinja"), system_template(text))) == text


@pytest.mark.parametrize("question, a, b", VALUES)
def test_user_message_equals_chained_str_replace(question, a, b):
    text = loaded(USER_FIXTURE)
    got = render_user(user_template(text), question, a, b)
    assert got == authors_user(text, question, a, b)


def test_the_tricky_cases_really_are_tricky():
    text = loaded(USER_FIXTURE)
    # A question with {Response_A} receives the response, and a question ending in
    # "{Response_" joins the template's "A}" into a placeholder, as in their code.
    assert "in the question" in authors_user(text, *VALUES[1]) and " {Response_B} in A " not in authors_user(
        text, *VALUES[1])
    joined = authors_user(text, *VALUES[4])
    assert "ends with A ends the text" in joined


_pieces = st.sampled_from(
    ["{question}", "{Response_A}", "{Response_B}", "{Response_", "A}", "{{", "}}", "{%", "%}", "{#", "#}",
     "{% raw %}", "{% endraw %}", "{%- endraw %}", "endraw", " ", "\n", "\t", "\u00a0", "-", "+", "`", "x"]
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_pieces, max_size=16), st.lists(_pieces, max_size=6), st.lists(_pieces, max_size=6),
       st.lists(_pieces, max_size=6))
def test_random_templates_and_values(template, question, a, b):
    text = loaded("".join(template))
    q, ra, rb = "".join(question), "".join(a), "".join(b)
    assert render_user(user_template(text), q, ra, rb) == authors_user(text, q, ra, rb)
    assert render(TemplateRef(Path("s.jinja"), system_template(text))) == text


# --------------------------------------------------------------------------- download


class _Files(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}

    def do_GET(self) -> None:  # http.server's name
        body = self.files.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body or b"not found")

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def file_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/repo"
    server.shutdown()
    server.server_close()


def test_download_checks_the_pinned_digest(file_server, tmp_path):
    import hashlib

    _Files.files = {"/repo/prompts/pairwise_system.txt": SYSTEM_FIXTURE.encode(),
                    "/repo/prompts/pairwise_user.txt": USER_FIXTURE.encode()}
    digests = {SYSTEM.path: hashlib.sha256(SYSTEM_FIXTURE.encode()).hexdigest(),
               USER.path: hashlib.sha256(USER_FIXTURE.encode()).hexdigest()}
    files = fetch(file_server, expected=digests)
    paths = write_templates(tmp_path / "t", files)
    assert [p.relative_to(tmp_path / "t").as_posix() for p in paths] == ["judge/system.jinja", "judge/user.jinja"]
    # The real digests (of the pinned commit) do not match our fixture: refused.
    with pytest.raises(PRBError, match="is not the file of commit a5c6814") as info:
        fetch(file_server)
    assert "\n" not in str(info.value)
    _Files.files = {}
    with pytest.raises(PRBError, match="could not download .*pairwise_system.txt"):
        fetch(file_server, expected=digests)


def test_offline_command_fails_with_one_line(tmp_path):
    # A proxy on a closed port stands for "no internet" on any machine.
    proc = run_cli(["templates", "official", str(tmp_path / "t")], cwd=tmp_path,
                   env={"https_proxy": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"})
    assert proc.returncode == 2  # a user error, like every other one
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith("prb: could not download https://raw.githubusercontent.com/Martin-qyma/"
                               "Personalized-RewardBench/a5c6814d22738c264f3c27576f54e50e04e16c10/prompts/")
    assert "on a machine with internet access" in lines[0] and "--source" in lines[0]
    assert not (tmp_path / "t").exists()


@pytest.fixture
def checkout(tmp_path) -> Path:
    folder = tmp_path / "their-repo"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "pairwise_system.txt").write_bytes(SYSTEM_FIXTURE.encode())
    (folder / "prompts" / "pairwise_user.txt").write_bytes(USER_FIXTURE.encode())
    return folder


def test_source_checkout_and_overwrite_rules(tmp_path, checkout):
    target = tmp_path / "official"
    proc = run_cli(["templates", "official", str(target), "--source", str(checkout)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {target / 'judge' / 'user.jinja'}" in proc.stdout
    assert "differs from commit a5c6814; converted as it is" in proc.stdout
    assert "--metadata '{\"templates\": " in proc.stdout
    again = run_cli(["templates", "official", str(target), "--source", str(checkout)], cwd=tmp_path)
    assert again.returncode == 0
    (checkout / "prompts" / "pairwise_user.txt").write_text("{question} / {Response_A} / {Response_B}")
    refused = run_cli(["templates", "official", str(target), "--source", str(checkout)], cwd=tmp_path)
    assert refused.returncode == 2 and "already exists and differs; pass --force" in refused.stderr
    forced = run_cli(["templates", "official", str(target), "--source", str(checkout), "--force"], cwd=tmp_path)
    assert forced.returncode == 0
    assert render(resolve("judge/user.jinja", str(target)), question="q", category="", response_a="a",
                  response_b="b", posts=[], aspects=[]) == "q / a / b"
    missing = run_cli(["templates", "official", str(target), "--source", str(tmp_path)], cwd=tmp_path)
    assert missing.returncode == 2 and "no prompts/pairwise_system.txt under" in missing.stderr


@pytest.mark.slow
def test_judge_receives_the_authors_messages_byte_for_byte(tmp_path, checkout):
    target = tmp_path / "official"
    assert run_cli(["templates", "official", str(target), "--source", str(checkout)], cwd=tmp_path).returncode == 0
    rows = copy.deepcopy(sample_rows("Art_and_Entertainment"))
    for row, (question, a, b) in zip(rows, VALUES):
        row["question"], row["chosen"], row["rejected"] = question, a, b
    data = write_layout(tmp_path / "data", {"Art_and_Entertainment": rows}, "jsonl")
    with FakeLLMServer(always("A")) as server:
        proc = run_cli(
            ["eval", "--model", "prb-judge",
             "--model_args", f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                             f"cache_dir={tmp_path / 'cache'},num_concurrent=1",
             "--tasks", "personalized_rb_official_art",
             "--metadata", json.dumps({"data_dir": str(data), "templates": str(target)})],
            cwd=tmp_path, env={"PRB_TEST_KEY": "sk-test"},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        sent = [r["body"]["messages"] for r in server.requests]
    system_text = loaded(SYSTEM_FIXTURE)
    user_text = loaded(USER_FIXTURE)
    from prb_tasks.replies.order import official_positions

    expected = []
    for row, chosen_in_a in zip(rows, official_positions(len(rows))):
        a, b = (row["chosen"], row["rejected"]) if chosen_in_a else (row["rejected"], row["chosen"])
        expected.append([{"role": "system", "content": system_text},
                         {"role": "user", "content": authors_user(user_text, row["question"], a, b)}])
    got = [[{"role": m["role"], "content": m["content"]} for m in messages] for messages in sent]
    assert sorted(got, key=json.dumps) == sorted(expected, key=json.dumps)
