"""A personalization method's mistakes are one line naming the method, the call and the
user: scores that are NaN, inf, None, arrays or strings, exceptions in learn, adapt or
score, and a call that never returns (``method_time_limit``). NumPy scalars are fine."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.method import Method
from prb_tasks.fewshot.registry import MethodError
from tests.fewshot_fixture import constructed
from tests.runner import run_cli


class Scripted(Method):
    """Scores by the first feature, or returns / raises what the test asks for."""

    name = "scripted"

    def __init__(self, returns=None, raise_in: str = "", hang_in: str = "") -> None:
        self.returns, self.raise_in, self.hang_in = returns, raise_in, hang_in
        self.release = threading.Event()

    def _maybe(self, call: str) -> None:
        if self.raise_in == call:
            raise RuntimeError(f"boom in {call}")
        if self.hang_in == call:
            self.release.wait(60)  # "never" returns, within the test's patience

    def learn(self, seen):
        self._maybe("learn")

    def adapt(self, user, support):
        self._maybe("adapt")

    def score(self, user, prompt, response):
        self._maybe("score")
        if self.returns is not None:
            return self.returns(response)
        return float(response.features[0])


DATA = constructed(n_users=20, pairs=30)


@pytest.mark.parametrize(("returns", "shown"), [
    (lambda r: float("nan"), "returned nan; it must return a finite number"),
    (lambda r: float("inf"), "returned inf; it must return a finite number"),
    (lambda r: np.float32("-inf"), "returned -inf; it must return a finite number"),
    (lambda r: None, "returned NoneType None; it must return one real number"),
    (lambda r: r.features, "returned an array of shape (6,); it must return one real number"),
    (lambda r: np.array(1.0), "returned an array of shape (); it must return one real number"),
    (lambda r: "1.0", "returned str '1.0'; it must return one real number"),
    (lambda r: True, "returned bool True; it must return one real number"),
])
def test_a_score_that_is_not_one_finite_number_is_one_line(returns, shown: str) -> None:
    with pytest.raises(MethodError) as caught:
        run(Scripted(returns=returns), DATA)
    message = str(caught.value)
    assert message.startswith("prb-method (scripted): score() for user 'u") and " at k=0, query pair 'u" in message
    assert shown in message and "\n" not in message


def test_numpy_scalars_and_ints_are_accepted() -> None:
    as_float = run(Scripted(), DATA)
    for returns in (lambda r: np.float32(r.features[0]), lambda r: np.float64(r.features[0]),
                    lambda r: int(np.sign(r.features[0]) * 1000)):
        outcomes = run(Scripted(returns=returns), DATA)
        assert len(outcomes) == len(as_float)
    ints = run(Scripted(returns=lambda r: np.int64(round(r.features[0] * 1e6))), DATA)
    assert [o.correct for o in ints] == [o.correct for o in as_float]


@pytest.mark.parametrize("call", ["learn", "adapt", "score"])
def test_an_exception_in_any_call_is_one_line_naming_it(call: str) -> None:
    with pytest.raises(MethodError) as caught:
        run(Scripted(raise_in=call), DATA)
    message = str(caught.value)
    assert f"prb-method (scripted): {call}()" in message and f"raised RuntimeError: boom in {call}" in message
    if call != "learn":
        assert "for user 'u" in message
    assert "\n" not in message


@pytest.mark.parametrize("call", ["learn", "adapt", "score"])
def test_a_call_that_never_returns_is_bounded_by_the_time_limit(call: str) -> None:
    method = Scripted(hang_in=call)
    started = time.monotonic()
    try:
        with pytest.raises(MethodError, match=r"did not return within method_time_limit=0.5 s") as caught:
            run(method, DATA, time_limit=0.5)
    finally:
        method.release.set()  # let the abandoned thread end
    assert time.monotonic() - started < 20
    assert (call == "learn") == str(caught.value).startswith("prb-method (scripted): learn()")
    # Without a limit the same method finishes once released.
    assert run(Scripted(), DATA, time_limit=30)


NAN_METHOD = '''
from prb_tasks.fewshot.method import Method


class NanMethod(Method):
    name = "nan_method"

    def learn(self, seen):
        pass

    def adapt(self, user, support):
        pass

    def score(self, user, prompt, response):
        return float("nan")


class Sleepy(Method):
    name = "sleepy"

    def learn(self, seen):
        import time
        time.sleep(3600)

    def adapt(self, user, support):
        pass

    def score(self, user, prompt, response):
        return 0.0
'''


@pytest.mark.slow  # three prb eval runs (~14 s on 2 cores)
def test_through_prb_eval_a_nan_method_and_a_hung_one_exit_2(tmp_path: Path) -> None:
    (tmp_path / "nanmethod.py").write_text(textwrap.dedent(NAN_METHOD), encoding="utf-8")
    base = ["eval", "--model", "prb-method", "--tasks", "personalized_custom_fewshot", "--metadata",
            '{"data_path": "example", "queries": 2}']
    env = {"PYTHONPATH": f"{tmp_path}:{Path(__file__).resolve().parents[2]}"}
    proc = run_cli(base + ["--model_args", "method=nanmethod:NanMethod"], cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr[-3000:]  # before: exit 0 and a silent 0%
    # Named as passed (issue 48 item 7): the class's name attribute may be a base class's.
    assert "prb-method (nanmethod:NanMethod): score() for user" in proc.stderr and "returned nan" in proc.stderr
    assert "Traceback" not in proc.stderr
    started = time.monotonic()
    proc = run_cli(base + ["--model_args", "method=nanmethod:Sleepy,method_time_limit=2"], cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "prb-method (nanmethod:Sleepy): learn() did not return within method_time_limit=2 s" in proc.stderr
    assert time.monotonic() - started < 300
    proc = run_cli(base + ["--model_args", "method=nanmethod:Sleepy,method_time_limit=soon"], cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "method_time_limit=soon: give seconds" in proc.stderr, proc.stderr[-2000:]


class Batched(Scripted):
    """Scores a user's query responses in one call (``score_batch``), or returns too few."""

    name = "batched"

    def __init__(self, drop: int = 0, nan_at: int = -1) -> None:
        super().__init__()
        self.drop, self.nan_at, self.calls = drop, nan_at, 0

    def score_batch(self, user, items):
        self.calls += 1
        values = [float(response.features[0]) for _, response in items]
        if self.nan_at >= 0:
            values[self.nan_at] = float("nan")
        return values[: len(values) - self.drop]


def test_score_batch_gives_the_numbers_of_score_in_one_call_per_user_and_k() -> None:
    one_by_one = run(Scripted(), DATA)
    method = Batched()
    batched = run(method, DATA)
    assert [(o.key, o.k, o.chosen, o.rejected) for o in batched] == \
        [(o.key, o.k, o.chosen, o.rejected) for o in one_by_one]
    assert method.calls == len({(o.user_id, o.k) for o in batched})


@pytest.mark.parametrize(("method", "shown"), [
    (Batched(drop=1), "returned 15 rewards for 16 responses; it must return one per (prompt, response)"),
    (Batched(nan_at=1), "returned nan; it must return a finite number"),
])
def test_a_score_batch_that_is_wrong_is_one_line(method, shown: str) -> None:
    with pytest.raises(MethodError) as caught:
        run(method, DATA)
    message = str(caught.value)
    assert message.startswith("prb-method (batched): score_batch() for user 'u") and shown in message
    assert "\n" not in message


def test_device_reaches_a_method_that_takes_it(tmp_path, monkeypatch) -> None:
    """``device`` is a harness key that prb-method drops, except for a method whose
    constructor takes it (the trained method's ``device=cuda``)."""
    from prb_tasks.fewshot.model import MethodLM

    (tmp_path / "on_device_method.py").write_text(textwrap.dedent("""
        from prb_tasks.fewshot.method import Method

        class OnDevice(Method):
            def __init__(self, device: str = "cpu"):
                self.device = device
            def learn(self, seen): pass
            def adapt(self, user, support): pass
            def score(self, user, prompt, response): return 0.0
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    lm = MethodLM.create_from_arg_string("method=on_device_method:OnDevice,device=cuda:1,batch_size=4")
    assert lm.options == {"device": "cuda:1"}
    assert MethodLM.create_from_arg_string("method=nonpersonalized,device=cuda:1").options == {}
