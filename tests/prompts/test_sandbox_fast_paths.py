"""The sandbox's shortcuts for the common case give jinja's answers (issue 51, item 2).

A profile prompt is rendered two to four times per judgment (the prompt store renders it
again when the request is sent and when the samples file is written), so the sandbox
answers the usual questions -- how long is this piece of text, may a template read
``post.text`` -- without jinja's general machinery. These tests pin that the answers
stay jinja's, including for the objects jinja guards, and that the shortcuts are taken.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

import jinja2.sandbox
import pytest
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

import prb_tasks.documents.personalized_rb as personalized_rb
from prb_tasks.prompts import sandbox
from prb_tasks.prompts.retrieval import SelectedPost
from prb_tasks.prompts.templates import TemplateProblem, TemplateRef, _environment, resolve


@dataclass
class Post:
    text: str
    rank: int
    _secret: str = "hidden"


class Liar:
    """An object that claims to be a function (``isinstance`` believes ``__class__``)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return types.FunctionType

    func_code = "x"


def _generator():
    yield 1


async def _coroutine() -> None:
    return None


def _objects() -> list[Any]:
    coroutine = _coroutine()
    coroutine.close()  # never awaited: only its attributes are asked about
    frame = sys._getframe()
    try:
        raise ValueError
    except ValueError as exc:
        traceback = exc.__traceback__
    return [Post("t", 1), "text", 3, {"a": 1}, [1], Post, type, _objects, Post.__init__, Post("t", 1).__eq__,
            _generator(), coroutine, frame, frame.f_code, traceback, Liar(), str.upper, "x".upper]


ATTRIBUTES = ("text", "rank", "_secret", "__class__", "__init__", "__globals__", "__code__", "func_code", "mro",
              "gi_frame", "gi_code", "cr_frame", "f_locals", "f_globals", "co_code", "tb_frame", "upper", "format",
              "__self__", "__func__", "im_func")


def test_attribute_checks_give_jinjas_answer_for_every_kind_of_object():
    ours, jinjas = sandbox.LimitedSandbox(), SandboxedEnvironment()
    for obj in _objects():
        for attr in ATTRIBUTES:
            value = getattr(obj, attr, None)
            assert ours.is_safe_attribute(obj, attr, value) == jinjas.is_safe_attribute(obj, attr, value), \
                (obj, attr)
            assert (ours.wrap_str_format(value) is None) == (jinjas.wrap_str_format(value) is None), (obj, attr)


def test_reading_attributes_of_ordinary_objects_skips_jinjas_isinstance_chain(monkeypatch: pytest.MonkeyPatch):
    calls = []
    original = jinja2.sandbox.is_internal_attribute

    def counted(obj: Any, attr: str) -> bool:
        calls.append(attr)
        return original(obj, attr)

    monkeypatch.setattr(jinja2.sandbox, "is_internal_attribute", counted)
    template = sandbox.prepare(_environment(), "{% for p in posts %}{{ p.rank }}: {{ p.text }}\n{% endfor %}", "t")
    posts = [Post(f"post {i}", i) for i in range(50)]
    with sandbox.budget_scope():
        text = template.render(posts=posts)
    assert text.splitlines()[49] == "49: post 49"
    assert calls == []  # before: twice per post
    # What jinja refuses is still refused, through the shortcut.
    for source in ("{{ p._secret }}", "{{ p.__class__ }}", "{{ p.__init__.__globals__ }}"):
        with sandbox.budget_scope(), pytest.raises(SecurityError, match="is unsafe"):
            sandbox.prepare(_environment(), source, "t").render(p=posts[0])


def test_a_piece_of_text_is_measured_as_the_walk_would_and_charged_one_step():
    with sandbox.budget_scope():
        budget = sandbox._BUDGET.get()
        assert budget is not None
        before = budget.walk
        assert sandbox._measure("x" * 1234) == (1234, 0)
        assert budget.walk == before - 1
        assert sandbox._measure(["ab", "cd"]) == (2 + 4 + 4 + 4, 1)  # containers still walked


def _post(rank: int) -> SelectedPost:
    return SelectedPost(rank=rank, id=f"p{rank}", category="Art", text=f"post {rank}")


def test_the_profile_prompt_builds_only_the_variables_its_template_names(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Any):
    formatted = []
    original = personalized_rb.format_posts
    monkeypatch.setattr(personalized_rb, "format_posts", lambda posts: formatted.append(1) or original(posts))
    row = personalized_rb.PairRow(id="r1", question="Q?", category="Art", rubric_aspects=(), narrative="",
                                  chosen="c", rejected="r")
    posts = [_post(1), _post(2)]
    bundled = resolve("judge/user_profile.jinja")
    assert not bundled.mentions("posts_text")
    text = personalized_rb._render_user(bundled, row, "A text", "B text", posts=posts)
    assert "Post 2 (Category: Art):\npost 2" in text and "A text" in text
    assert formatted == []  # before: formatted on every render, never shown
    # A user's template that names them gets them.
    custom = tmp_path / "user.jinja"
    custom.write_text("{{ posts_text }}|{{ aspects|length }}", encoding="utf-8")
    ref = TemplateRef(custom, custom.read_text(encoding="utf-8"))
    assert personalized_rb._render_user(ref, row, "a", "b", posts=posts) == f"{original(posts)}|0"
    assert formatted == [1]
    # A variable the template does not name is still listed when it fails.
    broken = TemplateRef(custom, "{{ nothing }}")
    with pytest.raises(TemplateProblem, match="available variables: aspects, category, posts, posts_text, "):
        personalized_rb._render_user(broken, row, "a", "b", posts=posts)
