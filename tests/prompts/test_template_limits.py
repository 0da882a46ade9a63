"""The template sandbox bounds what a template may build, produce and do (issue 14, item 7).

Hostile templates render in a child process whose address space is capped (RLIMIT_AS), so
a regression fails the test (MemoryError, or the child dies) instead of exhausting the
machine. Each must stop quickly with one line naming the file, the line and the limit.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from prb_tasks.common.resources import templates_dir
from prb_tasks.prompts.sandbox import MAX_OUTPUT, MAX_VALUE
from prb_tasks.prompts.templates import VERBATIM_MARK, TemplateProblem, is_bundled, render, resolve
from tests.watchdog import run_watched

HOSTILE = {
    "string repeat": ("{{ 'x' * 300000000 }}", "'*' would build about 300,000,000 characters"),
    "list repeat": ("{{ ([1] * 300000000)|length }}", "'*' would build"),
    "range": ("{% for i in range(10000000) %}{% endfor %}", "range() of 10,000,000 items"),
    "nested loops": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                     "more than 100,000 loop iterations and calls"),
    "center": ("{{ 'x'|center(1000000000) }}", "'center' filter would build"),
    "indent": ("{{ ('a\\n' * 100000)|indent(1000) }}", "'indent' filter would build"),
    "format filter": ("{{ '%1000000000d'|format(1) }}", "'format' filter would build"),
    "printf": ("{{ '%1000000000d' % 1 }}", "'%' formatting would build"),
    "str.format": ("{{ '{:>1000000000}'.format('x') }}", "str.format() would build"),
    "ljust": ("{{ 'x'.ljust(1000000000) }}", "str.ljust() would build"),
    "expandtabs": ("{{ ('\\t' * 100000).expandtabs(100000) }}", "str.expandtabs() would build"),
    "replace": ("{{ ('a' * 100000)|replace('a', 'b' * 100000) }}", "'replace' filter would build"),
    "join of a huge list": ("{% set s = 'x' * 900000 %}{{ ([s] * 1000)|join }}", "would build"),
    "join separator": ("{% set s = 'x' * 900000 %}{{ range(1000)|join(s) }}", "'join' filter would build"),
    "nested references": ("{% set a = 'x' * 900000 %}{% set b = [a, a, a, a] %}{{ [b, b, b, b]|string }}",
                          "'string' filter would build"),
    "concat doubling": ("{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
                        "{% endfor %}{{ ns.s }}", "'~' would build"),
    "list doubling": ("{% set l = [1] %}{% for i in range(60) %}{{ l.extend(l) }}{% endfor %}", "would build"),
    "output in a loop": ("{% for i in range(100000) %}{{ 'y' * 100 }}{% endfor %}",
                         "produces more than 1,000,000 characters"),
    "text in a filter block": ("{% filter upper %}{% for i in range(100000) %}abcdefghijklmnopqrstuvwxyz"
                               "{% endfor %}{% endfilter %}", "produces more than 1,000,000 characters"),
    "huge number": ("{{ 2 ** 100000000 }}", "computes a number of about 100,000,001 bits"),
    "sum of lists": ("{{ ([[1]] * 10)|sum(start=[]) }}", "only numbers can be summed"),
    "lipsum": ("{{ lipsum(1000000) }}", "lipsum() would build"),
    "tojson indent": ("{{ ('a' * 900000)|tojson(indent=100) }}", "'tojson' filter would build"),
    "wordwrap": ("{{ ('a ' * 100000)|wordwrap(1, wrapstring='x' * 1000) }}", "'wordwrap' filter would build"),
    "batch fill": ("{% set s = 'x' * 900000 %}{{ [1]|batch(100000, s)|list|length }}", "'batch' filter would build"),
    "translate": ("{{ ('x' * 100000).translate({120: 'y' * 100000}) }}", "str.translate() would build"),
}

_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: far below what the attacks need
    from prb_tasks.prompts.templates import TemplateProblem, render, resolve
    out = {}
    for name, path in json.loads(sys.argv[1]).items():
        start = time.perf_counter()
        try:
            render(resolve("judge/user.jinja", override=path), question="q")
            message = None
        except TemplateProblem as exc:
            message = str(exc)
        out[name] = [message, time.perf_counter() - start]
    print(json.dumps(out))
""")


def test_hostile_templates_stop_fast_with_one_line_under_a_memory_cap(tmp_path):
    paths = {}
    for number, (name, (body, _)) in enumerate(HOSTILE.items()):
        path = tmp_path / f"t{number}.jinja"
        path.write_text("Question: {{ question }}\n" + body + "\n", encoding="utf-8")
        paths[name] = str(path)
    done = run_watched([sys.executable, "-c", _CHILD, json.dumps(paths)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    for name, (_, expected) in HOSTILE.items():
        message, seconds = outcome[name]
        assert message is not None, f"{name}: rendered without error"
        assert "\n" not in message and "MemoryError" not in message, f"{name}: {message}"
        assert message.startswith(f"prb: template {paths[name]}:2: "), f"{name}: {message}"
        assert expected in message, f"{name}: {message}"
        assert seconds < 10, f"{name}: {seconds:.1f} s"


@pytest.mark.parametrize(
    "body",
    ["{{ 'x' * 500000 }}", "{% for i in range(50000) %}{{ i }}{% endfor %}",
     "{{ (['word'] * 1000)|join(' ')|wordwrap(40) }}", "{{ '%-20s|%5.2f'|format('name', 3.14159) }}",
     "{{ '{:>10}'.format('right') }}", "{{ 'a,b'.split(',')|join(' and ') }}",
     "{% set l = [] %}{% for i in range(1000) %}{{ l.append(i) or '' }}{% endfor %}{{ l|sum }}"],
)
def test_ordinary_large_templates_still_render(tmp_path, body):
    user = tmp_path / "user.jinja"
    user.write_text(body, encoding="utf-8")
    assert render(resolve("judge/user.jinja", override=str(user)))
    assert MAX_VALUE >= 500_000 and MAX_OUTPUT >= 500_000


def test_bundled_templates_render_exactly_as_in_a_plain_sandbox(tmp_path):
    plain = SandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                 keep_trailing_newline=False, autoescape=False)
    posts = [{"rank": i, "id": f"p{i}", "category": "Food", "text": f"post {i} " * 30} for i in range(1, 4)]
    aspects = [{"aspect": "brevity", "evidence": "short posts", "reason": "busy"}] * 2
    history = [{"prompt": "Where?", "response_a": "Here.", "response_b": "There.", "chosen": "A",
                "chosen_text": "Here.", "rejected_text": "There.", "reason": "closer"}]
    # Every variable any bundled template reads (PRB, history families, pointwise, planner,
    # PersonalLLM generation, RewardBench 2 ratings, PersonalRewardBench's P-GenRM prompts).
    variables = dict(question="How?", category="Food", response_a="First.", response_b="Second.",
                     response="Only.", posts=posts, posts_text="Post 1 (Category: Food):\npost 1", aspects=aspects,
                     history=history, context="Earlier: A.",
                     demographics=[{"name": "age", "value": "30"}], responses="winning_only", ties=True,
                     profile=[("Self-description", "A nurse.")], reason="It was short.", feedback="Too long.",
                     evidence="Earlier ratings.", few_shots="Pair 1: A.", user_input="Why?", response_1="One.",
                     response_2="Two.")
    names = sorted(p.relative_to(templates_dir()).as_posix() for p in templates_dir().rglob("*.jinja"))
    assert len(names) >= 5
    for name in names:
        ref = resolve(name)
        expected = plain.from_string(ref.source).render(**variables)
        # A verbatim template (the authors' prompts) keeps its whitespace; ours are stripped.
        expected = expected if ref.source.startswith(VERBATIM_MARK) else expected.strip()
        # Ours render outside the sandbox; the same text from a user's file goes through it.
        copy = tmp_path / name.replace("/", "_")
        copy.write_text(ref.source, encoding="utf-8")
        as_user = resolve(name, override=str(copy))
        assert is_bundled(ref) and not is_bundled(as_user)
        assert render(ref, **variables) == render(as_user, **variables) == expected, name


def test_a_bundled_template_keeps_strict_variables_and_names_its_line() -> None:
    ref = resolve("judge/user_profile.jinja")
    with pytest.raises(TemplateProblem, match=r"user_profile\.jinja:2 failed to render: 'posts' is undefined"):
        render(ref, question="q", response_a="a", response_b="b")
