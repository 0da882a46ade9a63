"""What a few-shot method knows about a user: demographics, profile text, past choices with
reasons and value tags; filled from each family, read-only, empty where the data has none,
never holding a query pair's label, and rendered to a budget by fewshot.context."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.personalized_rb.schema import PRBRow
from prb_tasks.documents import fewshot
from prb_tasks.fewshot.context import token_counter, user_text
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.method import Method, MissingUserInfo, Pair, Post, Response, SeenUser, User
from prb_tasks.fewshot.registry import MethodError
from prb_tasks.fewshot.sources import custom_pairs, lookup, personalized_rb_user
from tests.fewshot_fixture import constructed
from tests.liveness import count_at_each_validation, track_records

AGES = {f"u{n}": 20 + 5 * n for n in range(8)}


def _write_users(path: Path, n_pairs: int = 6) -> Path:
    """Eight users, each pair with a reason and a tag naming its own key (so a leak is visible)."""
    rows = []
    for uid, age in AGES.items():
        prefs = [{"prompt": f"question {i} of {uid}", "response_A": f"short answer {i}",
                  "response_B": f"a much longer answer number {i} with detail",
                  "chosen_response": "response_A" if age < 40 else "response_B",
                  "reason": f"REASON-{uid}/{i}", "value_alignment": [f"TAG-{uid}/{i}", "brevity"]}
                 for i in range(n_pairs)]
        row = {"user_id": uid, "demographics": {"age": age, "languages": ["pt", "en"], "home": {"city": "Porto"}},
               "preferences": prefs}
        if uid != "u0":
            row["profile"] = [f"I am {uid} and I like gardening.", "Second note about cooking."]
        rows.append(row)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def custom_file(tmp_path: Path) -> Path:
    return _write_users(tmp_path / "users.jsonl")


def _custom_data(path: Path):
    docs = fewshot.build_docs("custom", "method", data_path=str(path), queries=2)
    return lookup(docs[0]["split_key"])


def test_custom_users_carry_the_files_demographics_profile_reasons_and_tags(custom_file: Path) -> None:
    by_user, users = custom_pairs(read_users(custom_file))
    u1 = users["u1"]
    assert u1.family == "custom"
    assert u1.demographics["age"] == 25 and u1.demographics["languages"] == ("pt", "en")
    assert u1.demographics["home"]["city"] == "Porto"
    assert [p.text for p in u1.profile] == ["I am u1 and I like gardening.", "Second note about cooking."]
    assert users["u0"].profile == ()
    first = by_user["u1"][0]
    assert first.reason == "REASON-u1/0" and first.values == ("TAG-u1/0", "brevity")


def test_a_profile_may_be_one_text_and_a_wrong_type_is_one_line(tmp_path: Path) -> None:
    from prb_tasks.data.errors import DataError

    row = {"user_id": "a", "profile": "retired teacher, Lisbon",
           "preferences": [{"prompt": "p", "response_A": "x", "response_B": "y", "chosen_response": "response_A"}]}
    (tmp_path / "one.jsonl").write_text(json.dumps(row), encoding="utf-8")
    _, users = custom_pairs(read_users(tmp_path / "one.jsonl"))
    assert users["a"].profile == (Post("retired teacher, Lisbon"),)
    (tmp_path / "bad.jsonl").write_text(json.dumps({**row, "profile": 7}), encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_users(tmp_path / "bad.jsonl")
    assert "field 'profile'" in str(err.value) and "must be a text or a list of texts" in str(err.value)
    assert "\n" not in str(err.value)


def test_users_are_read_only_and_equal_by_id() -> None:
    source = {"age": 30, "tags": ["a"]}
    user = User("u", demographics=source, profile=["text"])
    source["age"] = 99  # the caller's dict is copied, not shared
    assert user.demographics["age"] == 30 and user.profile == (Post("text"),)
    with pytest.raises(TypeError):
        user.demographics["age"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        user.demographics["tags"].append("b")
    with pytest.raises(Exception):
        user.family = "x"  # type: ignore[misc]
    assert user == User("u") and hash(user) == hash(User("u")) and {user: 1}[User("u")] == 1
    bare = User("v")
    assert dict(bare.demographics) == {} and bare.profile == () and bare.family == ""


def test_personalllm_users_have_no_demographics_or_text() -> None:
    from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm

    copy = write_personalllm(Path(__import__("tempfile").mkdtemp()), fixture_rows(40, seed=5))
    data = lookup(fewshot.build_docs("personalllm", "method", data_dir=str(copy), n_users=6, queries=2)[0]["split_key"])
    for user in data.users.values():
        assert user.family == "personalllm" and user.true_weights is not None
        assert dict(user.demographics) == {} and user.profile == ()
    assert all(p.reason == "" and p.values == () for p in data.pairs.values())
    with pytest.raises(MissingUserInfo) as err:
        next(iter(data.users.values())).require("demographics")
    assert "simulated" in str(err.value) and "personalized_custom_fewshot" in str(err.value)


def test_a_personalized_rewardbench_row_is_a_user_with_its_posts_and_no_rubric() -> None:
    row = PRBRow(id="r1", question="q", category="c", narrative="SECRET-NARRATIVE", chosen="a", rejected="b",
                 profile=[{"category": "Gardening", "id": "p1", "text": "tomatoes"}],
                 rubric_aspects=[{"aspect": "SECRET-ASPECT", "evidence": "e", "reason": "r"}])
    user = personalized_rb_user(row)
    assert user.user_id == "r1" and user.family == "personalized_rb"
    assert user.profile == (Post("tomatoes", "Gardening", "p1"),) and dict(user.demographics) == {}
    assert "SECRET" not in repr(user)
    assert User("r1", profile=row.profile).profile == user.profile  # the row's posts convert as they are
    with pytest.raises(TypeError, match="a profile item must be a text or a Post"):
        User("r1", profile=[3])
    with pytest.raises(MissingUserInfo, match="no demographics .*Personalized RewardBench"):
        user.require("demographics")


class Spy(Method):
    """Records everything it is handed, and the text it would condition on."""

    name = "spy"

    def __init__(self) -> None:
        self.learned: list[SeenUser] = []
        self.texts: list[str] = []
        self.users: list[User] = []

    def learn(self, seen: Sequence[SeenUser]) -> None:
        self.learned = list(seen)

    def adapt(self, user: User, support: Sequence[Pair]) -> None:
        self.users.append(user)
        self.texts.append(user_text(user, support, budget=100_000))

    def score(self, user: User, prompt: str, response: Response) -> float:
        self.texts.append(user_text(user, query=prompt, budget=100_000))
        return float(len(response.text))


def test_a_method_never_sees_a_query_pairs_reason_or_tags(custom_file: Path) -> None:
    data = _custom_data(custom_file)
    spy = Spy()
    run(spy, data)
    queries = {p.key for u in data.split.unseen for p in u.queries}
    supports = {p.key for u in data.split.unseen for p in u.pool}
    seen_keys = {p.key for u in spy.learned for p in u.pairs}
    assert queries and supports and not queries & seen_keys
    everything = "\n".join(spy.texts) + repr(spy.users) + repr(spy.learned)
    for key in queries:
        assert f"REASON-{key}" not in everything and f"TAG-{key}" not in everything
    # What is there: support reasons, the seen users' reasons in learn, demographics.
    assert any(f"REASON-{key}" in everything for key in supports)
    assert all(p.reason == f"REASON-{p.key}" for u in spy.learned for p in u.pairs)
    assert "- age: " in spy.texts[0]
    assert {u.user_id for u in spy.users} == {u.user_id for u in data.split.unseen}


def test_an_old_style_method_runs_unchanged(custom_file: Path) -> None:
    class Old(Method):  # written against the interface before users carried anything
        name = "old"

        def learn(self, seen):
            self.n = len(seen)

        def adapt(self, user, support):
            self.vote = sum(1 if len(p.chosen.text) > len(p.rejected.text) else -1 for p in support)

        def score(self, user, prompt, response):
            return float(self.vote * len(response.text))

    outcomes = run(Old(), _custom_data(custom_file))
    at8 = [o.correct for o in outcomes if o.k == 4]
    assert outcomes and sum(at8) == len(at8)  # each user's support agrees with their queries
    assert run(Old(), constructed(n_users=10, pairs=30))


def _docs_example(tmp_path: Path) -> type[Method]:
    """The demographics method of docs/personalization.md, as a user would save it."""
    import importlib.util
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "personalization.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- fewshot-user-example -->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/personalization.md lost its demographics example"
    (tmp_path / "age_methods.py").write_text(match.group(1), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("age_methods", tmp_path / "age_methods.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.AgeLength


def test_the_docs_demographics_method_is_right_and_fails_in_one_line_without_them(custom_file: Path,
                                                                                 tmp_path: Path) -> None:
    AgeLength = _docs_example(tmp_path)  # noqa: N806 - a class
    outcomes = run(AgeLength(), _custom_data(custom_file))
    assert outcomes and all(o.correct for o in outcomes)
    assert not any(o.correct for o in run(AgeLength(age=200), _custom_data(custom_file)) if AGES[o.user_id] >= 40)
    with pytest.raises(MethodError) as err:
        run(AgeLength(), constructed(n_users=10, pairs=30))
    line = str(err.value)
    assert "\n" not in line and line.startswith("prb-method (age_length): adapt() for user")
    assert "has no demographics" in line
    with pytest.raises(ValueError, match="'history' is not something a user carries"):
        User("u").require("history")


def _pair(i: int, reason: str = "", prompt: str | None = None) -> Pair:
    return Pair(f"k{i}", prompt or f"request number {i}", Response(f"preferred answer {i}"),
                Response(f"other answer {i}"), reason=reason or f"because {i}", values=("clarity",))


def test_user_text_renders_every_part_in_order_and_is_empty_for_nobody() -> None:
    user = User("u", demographics={"age": 30, "empty": ""}, profile=[Post("gardening notes", "Hobbies")])
    text = user_text(user, [_pair(0), _pair(1)])
    assert text.index("About the user:") < text.index("earlier choices") < text.index("Texts by or about")
    assert "- age: 30" in text and "empty" not in text
    assert text.index("request number 0") < text.index("request number 1")  # oldest first
    assert "Why: because 1" in text and "Values: clarity" in text and "Post 1 (Category: Hobbies):" in text
    assert user_text(User("nobody")) == ""
    assert "About the user" not in user_text(user, [_pair(0)], parts=("history", "profile"))
    with pytest.raises(ValueError, match="unknown part 'histroy'"):
        user_text(user, parts=("histroy",))


@pytest.mark.parametrize("budget", [60, 150, 400, 1000])
def test_user_text_stays_within_the_budget_and_keeps_the_latest_choices(budget: int) -> None:
    user = User("u", demographics={"age": 30})
    support = [_pair(i) for i in range(10)]
    text = user_text(user, support, budget=budget)
    assert 0 < len(text) <= budget
    if "request number" in text:
        assert "request number 9" in text  # the most recent is the first kept
    full = user_text(user, support, budget=100_000)
    assert all(f"request number {i}" in full for i in range(10))


def test_user_text_budget_in_tokens() -> None:
    class WordTokenizer:
        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": text.split()}

    measure = token_counter(WordTokenizer())
    text = user_text(User("u", profile=[f"post {i} " + "word " * 30 for i in range(5)]), budget=50, measure=measure)
    assert 0 < measure(text) <= 50 and len(text) > 50


def test_user_text_ranks_by_the_query_with_prbs_retrieval() -> None:
    posts = ["I bake sourdough bread every weekend", "My cat sleeps all day", "Marathon training log, week 3"]
    user = User("u", profile=posts)
    text = user_text(user, query="how long should I train before a marathon", budget=100_000)
    assert text.index("Marathon") < text.index("sourdough")
    support = [_pair(0, prompt="how to knead bread dough"), _pair(1, prompt="best running shoes for a marathon"),
               _pair(2, prompt="cat food brands")]
    small = user_text(User("u"), support, query="marathon pace", budget=160, max_item_chars=40)
    assert "running shoes" in small and "cat food" not in small
    with pytest.raises(ValueError, match="unknown retriever"):
        user_text(user, query="q", retriever="bm26")


def test_arrays_of_features_still_compare_by_key() -> None:
    a = Pair("k", "p", Response("x", np.ones(2)), Response("y"), reason="r1")
    assert a == Pair("k", "p", Response("x", np.zeros(2)), Response("y"), reason="r2")


def test_demographics_become_fixed_feature_columns() -> None:
    from prb_tasks.fewshot.demographics import DemographicEncoder

    seen = [User("a", demographics={"age": 20, "country": "Japan", "langs": ["ja", "en"], "home": {"city": "Kyoto"}}),
            User("b", demographics={"age": 40, "country": "Portugal", "retired": True})]
    enc = DemographicEncoder().fit(seen)
    assert enc.columns == sorted(enc.columns) and "home.city=Kyoto" in enc.columns and "retired=true" in enc.columns
    col = enc.columns.index
    a, b = enc.encode(seen[0]), enc.encode(seen[1])
    assert a[col("age")] == pytest.approx(-1.0) and b[col("age")] == pytest.approx(1.0)
    assert a[col("country=Japan")] == 1 and a[col("country=Portugal")] == 0
    assert a[col("langs=ja")] == a[col("langs=en")] == 1 and a[col("retired=?")] == 1 and b[col("retired=?")] == 0
    new = enc.encode(User("c", demographics={"country": "Chile"}))  # unseen value, missing age: flagged, not guessed
    assert new[col("country=?")] == 1 and new[col("age=?")] == 1 and new[col("age")] == 0
    assert not new[[col(c) for c in enc.columns if c.startswith("country=") and c != "country=?"]].any()
    with pytest.raises(MissingUserInfo, match="no user of personalllm has demographics"):
        DemographicEncoder().fit([User("x", family="personalllm")])
    with pytest.raises(ValueError, match="fit"):
        DemographicEncoder().encode(seen[0])


def test_a_custom_file_is_split_from_a_stream_of_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 51: the file's validated users were all read into a list (and cached for the run)
    # before the pairs were built; the pairs need one user's record at a time.
    prefs = [{"prompt": f"question {i}", "response_A": "short", "response_B": "a longer answer",
              "chosen_response": "response_A"} for i in range(12)]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"user_id": f"fs-mem-{n}", "preferences": prefs, "profile": ["post"] * 20})
                            + "\n" for n in range(30)), encoding="utf-8")
    alive = track_records(monkeypatch)
    seen = count_at_each_validation(monkeypatch, lambda: alive("fs-mem-"))
    data = _custom_data(path)
    assert len(seen) == 30 and len(data.users) == 30 and len(data.pairs) == 360
    assert max(seen) <= 2, seen
    assert alive("fs-mem-") == 0  # nothing of the file's records is kept once the split is built
