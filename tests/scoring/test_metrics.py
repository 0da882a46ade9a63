"""Per-document scoring and the pair-level aggregations."""

from __future__ import annotations

import math

from prb_tasks.scoring.metrics import (
    acc_chosen_in_a,
    acc_chosen_in_b,
    pair_all_correct,
    pair_consistency,
    position_bias,
    process_judge_both,
    process_judge_single,
    process_scalar,
    share_of_a,
)


def _both(answer_ab: str, answer_ba: str, key: str = "art/x"):
    return [
        process_judge_both({"pair_key": key, "chosen_position": "A"}, [answer_ab]),
        process_judge_both({"pair_key": key, "chosen_position": "B"}, [answer_ba]),
    ]


def _agg(docs):
    return {
        "acc": sum(d["acc"] for d in docs) / len(docs),
        "acc_pair": pair_all_correct([d["acc_pair"] for d in docs]),
        "consistency": pair_consistency([d["consistency"] for d in docs]),
        "pos_a_rate": share_of_a([d["pos_a_rate"] for d in docs]),
        "parse_fail": sum(d["parse_fail"] for d in docs) / len(docs),
    }


def test_always_a_is_half_right_and_never_consistent():
    m = _agg(_both("Result: A", "Result: A") + _both("Result: A", "Result: A", "art/y"))
    assert m == {"acc": 0.5, "acc_pair": 0.0, "consistency": 0.0, "pos_a_rate": 1.0, "parse_fail": 0.0}


def test_perfect_judge():
    m = _agg(_both("Result: A", "Result: B"))
    assert m == {"acc": 1.0, "acc_pair": 1.0, "consistency": 1.0, "pos_a_rate": 0.5, "parse_fail": 0.0}


def test_consistently_wrong_and_unparsed():
    m = _agg(_both("Result: B", "Result: A"))
    assert m["acc"] == 0 and m["consistency"] == 1.0
    m = _agg(_both("no idea", "Result: B"))
    assert m["acc"] == 0.5 and m["consistency"] == 0.0 and m["parse_fail"] == 0.5
    assert m["pos_a_rate"] == 0.0


def test_incomplete_pairs_are_ignored_and_empty_is_nan():
    docs = _both("Result: A", "Result: B") + _both("Result: A", "Result: B", "art/z")[:1]
    assert pair_all_correct([d["acc_pair"] for d in docs]) == 1.0
    assert math.isnan(pair_consistency([]))
    assert math.isnan(share_of_a([None, None]))


def test_official_reading_gives_unparsed_to_a():
    doc_a = {"pair_key": "k", "chosen_position": "A"}
    doc_b = {"pair_key": "k", "chosen_position": "B"}
    assert process_judge_single(doc_a, ["garbage"]) == {
        "acc": 0, "acc_macro": 0, "acc_official": 1, "pos_a_rate": None,
        "parse_fail": 1, "error_rate": 0, "skip_rate": 0,
        "acc_pos_a": ("A", 0), "acc_pos_b": ("A", 0), "pos_bias": ("A", 0),
        "acc_pos_a_official": ("A", 1), "acc_pos_b_official": ("A", 1), "pos_bias_official": ("A", 1),
        "pos_a_rate_official": "A", "parse_fail_official": 1, "always_a_official": 1,
    }
    assert process_judge_single(doc_b, ["garbage"])["acc_official"] == 0
    failed = process_judge_single(doc_a, ["[prb:error] Timeout"])
    assert (failed["acc_official"], failed["pos_a_rate_official"], failed["parse_fail_official"]) == (0, None, 0)
    # "Result: Response B" is B for us, a parse failure (hence A) for the original script.
    named = process_judge_single(doc_b, ["Result: Response B"])
    assert (named["acc"], named["acc_official"], named["parse_fail"], named["parse_fail_official"]) == (1, 0, 0, 1)


def _aggregate_single(docs_and_answers, suffix=""):
    outs = [process_judge_single({"pair_key": f"k{n}", "chosen_position": pos}, [answer])
            for n, (pos, answer) in enumerate(docs_and_answers)]
    return {name: fn([o[name + suffix] for o in outs]) for name, fn in
            (("acc_pos_a", acc_chosen_in_a), ("acc_pos_b", acc_chosen_in_b), ("pos_bias", position_bias))}


def test_per_position_accuracy_in_one_order():
    # Chosen in A three times (judge right twice), in B once (judge wrong).
    judged = [("A", "Result: A"), ("A", "Result: A"), ("A", "Result: B"), ("B", "Result: A")]
    assert _aggregate_single(judged) == {"acc_pos_a": 2 / 3, "acc_pos_b": 0.0, "pos_bias": 2 / 3}
    # Unreadable answers: wrong for us, "A" for the original script.
    judged = [("A", "no idea"), ("B", "no idea"), ("B", "Result: B")]
    assert _aggregate_single(judged) == {"acc_pos_a": 0.0, "acc_pos_b": 0.5, "pos_bias": 0.5}
    assert _aggregate_single(judged, "_official") == {"acc_pos_a": 1.0, "acc_pos_b": 0.5, "pos_bias": 0.5}


def test_per_position_accuracy_in_both_orders():
    # Pair x: always A (right when chosen is A). Pair y: perfect. Pair z: always B.
    docs = (_both("Result: A", "Result: A", "x") + _both("Result: A", "Result: B", "y")
            + _both("Result: B", "Result: B", "z"))
    assert acc_chosen_in_a([d["acc_pos_a"] for d in docs]) == 2 / 3
    assert acc_chosen_in_b([d["acc_pos_b"] for d in docs]) == 2 / 3
    assert position_bias([d["pos_bias"] for d in docs]) == 0.0
    docs = _both("Result: A", "Result: A", "x") + _both("Result: A", "Result: A", "y")
    assert position_bias([d["pos_bias"] for d in docs]) == 1.0
    assert math.isnan(position_bias([("A", 1)])) and math.isnan(acc_chosen_in_b([("A", 1)]))


def test_scalar_ties_are_wrong():
    assert process_scalar({}, [(2.0, False), (1.0, False)]) == {"acc": 1, "acc_macro": 1, "tie_rate": 0}
    assert process_scalar({}, [(1.0, False), (1.0, False)]) == {"acc": 0, "acc_macro": 0, "tie_rate": 1}
    assert process_scalar({}, [(0.5, False), (1.0, False)])["acc"] == 0


def test_double_game_on_judgments_with_known_answers():
    from prb_tasks.scoring.metrics import double_game

    # Each case: (reply with chosen in A, reply with chosen in B) and its net vote.
    cases = {
        "art/right": ("Result: A", "Result: B"),      # +1 +1 = +2: counts
        "art/wrong": ("Result: B", "Result: A"),      # -1 -1 = -2
        "art/always_a": ("Result: A", "Result: A"),   # +1 -1 = 0: order-inconsistent, scores nothing
        "art/always_b": ("Result: B", "Result: B"),   # -1 +1 = 0
        "art/half_read": ("Result: A", "no idea"),    # +1  0 = +1: counts
        "art/half_wrong": ("no idea", "Result: A"),   #  0 -1 = -1
        "art/unread": ("no idea", "nothing"),         #  0  0 = 0
    }
    docs = [d for key, (ab, ba) in cases.items() for d in _both(ab, ba, key)]
    votes = {}
    for d in docs:
        key, vote = d["double_game"]
        votes[key] = votes.get(key, 0) + vote
    assert votes == {"art/right": 2, "art/wrong": -2, "art/always_a": 0, "art/always_b": 0,
                     "art/half_read": 1, "art/half_wrong": -1, "art/unread": 0}
    score = double_game([d["double_game"] for d in docs])
    assert score == 2 / 7 and score.measured == 7
    # acc_pair asks for both orders right, so the half-read pair is where the two differ.
    assert pair_all_correct([d["acc_pair"] for d in docs]) == 1 / 7
    # A judge that always answers "A": acc 0.5, double game 0.
    always_a = _both("Result: A", "Result: A") + _both("Result: A", "Result: A", "art/y")
    assert double_game([d["double_game"] for d in always_a]) == 0.0
    # A pair missing an order (--limit) is left out; nothing measured is NaN.
    assert double_game([d["double_game"] for d in _both("Result: A", "Result: B")[:1]]).measured == 0
    assert math.isnan(double_game([]))


def test_a_line_beside_acc_official_when_replies_had_no_verdict():
    from prb_tasks.report.run_table import official_prior_line

    row = {"acc_official,none": 0.636, "parse_fail_official,none": 0.76, "always_a_official,none": 0.606}
    assert official_prior_line("personalized_rb_official", row, 158) == (
        "personalized_rb_official: acc_official 63.6% counts 120 of 158 replies (76%) as A, having no verdict the "
        "original script could read; a judge that always answers A scores 60.6% on the same pairs")
    assert official_prior_line("x", {**row, "parse_fail_official,none": 0.05}, 158) is None  # a few: no line
    assert official_prior_line("x", {"acc,none": 0.5}, 10) is None  # not an official run
    older = {k: v for k, v in row.items() if not k.startswith("always_a")}  # a run from before the metric
    assert official_prior_line("x", older, 0) == ("x: acc_official 63.6% counts 76% of replies as A, having no "
                                                  "verdict the original script could read")
