"""Lines under the compact table for real people's tasks: by language, by country, beside the crowd."""

from __future__ import annotations

from prb_tasks.scoring.people import people_lines


def _sample(user: str, item: str, chosen: str, acc: float, language: str = "fr", country: str = "France",
            order: str = "A") -> dict:
    doc = {"pair_key": f"{user}/{item}", "user_id": user, "item": item, "chosen_hash": chosen,
           "language": language, "country": country, "chosen_position": order}
    return {"doc": doc, "acc": acc}


def test_groups_and_the_majority_baseline() -> None:
    samples = [
        # u1's pair in both orders (one right, one wrong): one pair, credit 1/2.
        _sample("u1", "i1", "x", 1.0), _sample("u1", "i1", "x", 0.0, order="B"),
        _sample("u2", "i1", "x", 1.0), _sample("u3", "i1", "y", 0.0, language="hi", country="India"),
        _sample("u4", "i2", "z", 1.0, language="en", country="United States"),  # nobody else answered i2
    ]
    lines = people_lines("ca", samples)
    # Over judgments, as the table's acc: fr's three judgments (1, 0, 1) of two pairs.
    assert lines[0] == "ca by language, acc % as in the table (pairs): fr 66.7 (2), hi 0.0 (1), en 100.0 (1)"
    assert lines[1] == ("ca by country, acc % as in the table (pairs): France 66.7 (2), India 0.0 (1), "
                        "United States 100.0 (1)")
    # i1: u1 (x) sees u2 x, u3 y: a tie, 1/2; u2 (x) sees x, y: 1/2; u3 (y) sees x, x: wrong. The model: 1/2, 1, 0.
    assert lines[2] == "ca: majority of other people 33.3%, this model 50.0% on the 3 pairs others answered"


def test_lines_fit_and_other_tasks_get_none() -> None:
    samples = [_sample(f"u{i}", f"i{i}", "x", 1.0, country=f"Country number {i} with a long name") for i in range(40)]
    lines = people_lines("community_alignment_scalar_profile", samples)
    # Forty countries: two lines (the second indented), the rest counted.
    assert all(len(line) <= 120 for line in lines) and lines[2].startswith("  ") and lines[2].endswith("more")
    shown = sum(lines[k].count("Country number") for k in (1, 2))
    assert lines[2].endswith(f", +{40 - shown} more")
    assert lines[3].endswith("no pair was answered by another person, so there is no majority baseline")


def test_a_few_groups_are_all_shown() -> None:
    # PRISM's three conversation types did not fit one line beside a long task name: "+2 more" hid two of them.
    samples = [_sample(f"u{i}", f"i{i}", "x", float(i % 2)) for i in range(6)]
    for i, sample in enumerate(samples):
        sample["doc"]["conversation_type"] = ("controversy guided", "values guided", "unguided")[i % 3]
    lines = people_lines("community_alignment_scalar_profile", samples)
    wrapped = [k for k, line in enumerate(lines) if "by conversation type" in line][0]
    both = lines[wrapped] + lines[wrapped + 1]
    assert all(kind in both for kind in ("controversy guided", "values guided", "unguided")) and "more" not in both
    assert all(len(line) <= 120 for line in lines)
    assert people_lines("personalllm", [{"doc": {"pair_key": "p", "user_id": "u"}, "acc": 1.0}]) == []


def test_under_limit_the_groups_agree_with_the_tables_acc() -> None:
    # --limit cut the judge's second order of u2's and u3's pairs: five judgments of three pairs.
    samples = [_sample("u1", "i1", "x", 1.0), _sample("u1", "i1", "x", 1.0, order="B"),
               _sample("u2", "i2", "x", 0.0), _sample("u3", "i3", "x", 1.0, language="en"),
               _sample("u4", "i4", "x", 0.0, language="en"), _sample("u4", "i4", "x", 0.0, language="en", order="B")]
    table_acc = sum(s["acc"] for s in samples) / len(samples)
    (country, *_) = people_lines("t", samples)[1:]
    assert country == f"t by country, acc % as in the table (pairs): France {100 * table_acc:.1f} (4)"
    assert people_lines("t", samples)[0] == "t by language, acc % as in the table (pairs): fr 66.7 (2), en 33.3 (2)"


def test_conversation_type_and_cohort_lines_beside_language_and_country() -> None:
    samples = [_sample("u1", "i1", "x", 1.0), _sample("u2", "i2", "y", 0.0)]
    samples[0]["doc"].update(conversation_type="values guided", cohort="seen user")
    samples[1]["doc"].update(conversation_type="unguided", cohort="unseen user")
    lines = people_lines("prism", samples)
    assert "prism by conversation type, acc % as in the table (pairs): values guided 100.0 (1), unguided 0.0 (1)" \
        in lines
    assert "prism by cohort, acc % as in the table (pairs): seen user 100.0 (1), unseen user 0.0 (1)" in lines


def lore_cohort_accuracy(margins_by_person: dict[str, list[float]]) -> float:
    """LoRe's ``utils.evaluate_model`` per person (the share of their pairs whose chosen-minus-rejected
    score is strictly positive), then ``eval_multiple``'s mean over people."""
    shares = [sum(m > 0 for m in margins) / len(margins) for margins in margins_by_person.values()]
    return sum(shares) / len(shares)


def test_cohort_mean_over_people_is_lores_number() -> None:
    # Seen people answered 1, 3 and 4 pairs; an unseen person 2. Margins are a scalar RM's chosen - rejected;
    # a tie (margin 0) is wrong in LoRe's count and in prb's acc alike.
    seen = {"s1": [0.5], "s2": [1.0, -2.0, 0.0], "s3": [3.0, 1.0, 2.0, -1.0]}
    unseen = {"u1": [1.0, -1.0]}
    samples = []
    for cohort, people in (("seen user", seen), ("unseen user", unseen)):
        for person, margins in people.items():
            for j, margin in enumerate(margins):
                sample = _sample(person, f"{person}-{j}", "x", float(margin > 0))
                sample["doc"]["cohort"] = cohort
                samples.append(sample)
    lines = people_lines("prism_scalar", samples)
    # Over pairs (the table's way) seen is 5 of 8 = 62.5; over people (LoRe's) (1 + 1/3 + 3/4) / 3 = 69.4.
    assert "prism_scalar by cohort, acc % as in the table (pairs): seen user 62.5 (8), unseen user 50.0 (2)" in lines
    theirs_seen, theirs_unseen = 100 * lore_cohort_accuracy(seen), 100 * lore_cohort_accuracy(unseen)
    assert (f"prism_scalar by cohort, mean over people as LoRe reports, acc % (people): "
            f"seen user {theirs_seen:.1f} (3), unseen user {theirs_unseen:.1f} (1)") in lines
    assert f"{100 * lore_cohort_accuracy(seen):.1f}" == "69.4"


def test_no_cohort_line_without_cohorts() -> None:
    lines = people_lines("ca", [_sample("u1", "i1", "x", 1.0), _sample("u2", "i2", "x", 0.0)])
    assert not any("cohort" in line for line in lines)
