"""Release-size synthetic copies of Community Alignment and PRISM, for benchmarks only (not shipped).

Each copy is in its hub layout, with the release's number of labelled pairs as prb builds them
(``scale`` multiplies the people, so 2x has twice the pairs):

- Community Alignment (``community_alignment.csv``, the later release's single file, every column
  of :mod:`tests.community_alignment_fixture`): 31,539 conversations of two turns of four responses,
  six pairs each, **189,234 pairs**; 26 conversations per annotator (the card's median), a third of
  the opening prompts pre-generated and shared (so items repeat across people);
- PRISM (``survey.jsonl``, ``conversations.jsonl``, ``utterances.jsonl``, ``metadata.jsonl``):
  1,500 participants, 1,396 of them with conversations, 8,011 conversations whose opening turn has
  four rated responses and later turns two, 18,576 later turns in all: **42,609 pairs**
  (prb's default pairs: the chosen answer against each other one).

Answers are made of sentences drawn from a fixed pool (a log-normal number of them, about 900
characters, each answer starting with its own id so no two are one string), the way a release's
answers differ in text and length. Deterministic: the same seed gives byte-identical files.

    python benchmarks/real_people_data.py /tmp/prb-people --scale 1
    python benchmarks/real_people_data.py /tmp/prb-people-2x --scale 2 --family prism

Not a test and not benchmark data: its numbers say nothing about any model.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.community_alignment_fixture import COLUMNS, ca_row
from tests.prism_fixture import conversation, metadata_rows, survey_row, write_jsonl

#: Community Alignment: conversations at 1x (two turns of four responses: six pairs each).
CA_CONVERSATIONS = 31_539
CA_PER_ANNOTATOR = 26
#: PRISM at 1x: participants, those with conversations, conversations, later turns.
PRISM_SURVEYED, PRISM_ACTIVE, PRISM_CONVERSATIONS, PRISM_LATER_TURNS = 1_500, 1_396, 8_011, 18_576
PRISM_TYPES = ("unguided", "values guided", "controversy guided")
WORDS = """the of and to a in is it that for you was with on as have be at this but not are or from they by we an
one all would there their what so up out if about who get which go when make can like time no just know take people
into year your good some could them see other than then now look only come its over think also back after use two how
our work first well way even new want because any these give day most us really very much still last never before
should through always something while both around tried thought found need feel week month since again already little
long great small right old big high different place home keep start might next every early often maybe though usually
consider option approach example detail reason benefit risk step plan answer question advice value culture family
""".split()


class Text:
    """Answers and prompts from a pool of sentences (fast, varied, deterministic)."""

    def __init__(self, rng: random.Random, pool: int = 4000) -> None:
        self.rng = rng
        self.sentences = []
        for _ in range(pool):
            words = rng.choices(WORDS, k=rng.randint(8, 22))
            self.sentences.append(words[0].capitalize() + " " + " ".join(words[1:]) + ".")

    def answer(self, ident: str, median_chars: float = 900.0) -> str:
        """One answer of a log-normal length (median ``median_chars``), starting with ``ident``."""
        target = max(40, min(6000, round(self.rng.lognormvariate(math.log(median_chars), 0.6))))
        parts = [ident]
        size = len(ident)
        while size < target:
            parts.append(self.rng.choice(self.sentences))
            size += len(parts[-1]) + 1
        return " ".join(parts)

    def prompt(self, ident: str) -> str:
        """A person's message (one or two sentences)."""
        return f"{ident} " + " ".join(self.rng.choices(self.sentences, k=self.rng.randint(1, 2)))


def write_community(out: Path, scale: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """Write ``out/community_alignment.csv``; returns its counts.

    Args:
        out: the copy's folder (created).
        scale: multiplies the conversations (and so the annotators and pairs).
        seed: any integer; the same seed gives the same file.
    """
    rng = random.Random(f"prb-real-people:ca:{seed}")
    text = Text(rng)
    shared = [(text.prompt(f"Shared {n}:"), {x: text.answer(f"[shared {n}{x}]") for x in "abcd"}) for n in range(300)]
    total = round(CA_CONVERSATIONS * scale)
    out.mkdir(parents=True, exist_ok=True)
    countries = ("United States", "France", "India", "Brazil", "Germany", "Japan")
    languages = ("en", "fr", "hi", "pt", "de", "ja")
    with (out / "community_alignment.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*COLUMNS, "wave"])
        writer.writeheader()
        for conv in range(total):
            annotator = conv // CA_PER_ANNOTATOR
            if conv % 3 == 0:
                first, first_answers = shared[rng.randrange(len(shared))]
            else:
                first, first_answers = text.prompt(f"C{conv}:"), {x: text.answer(f"[{conv}.1{x}]") for x in "abcd"}
            second_answers = {x: text.answer(f"[{conv}.2{x}]") for x in "abcd"}
            turns = [(first, first_answers, rng.choice("abcd"), "because it is clearer" if conv % 4 == 0 else ""),
                     (text.prompt(f"C{conv} follow-up:"), second_answers, rng.choice("abcd"), "")]
            row = ca_row(100_000 + conv, 1_000 + annotator, languages[annotator % 6], turns,
                         country=countries[annotator % 6], age=("18-34", "35-45", "55+")[annotator % 3])
            writer.writerow({**row, "wave": "1"})
    return {"conversations": total, "annotators": -(-total // CA_PER_ANNOTATOR), "pairs": 6 * total}


def write_prism(out: Path, scale: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """Write a PRISM copy under ``out``; returns its counts.

    Args:
        out: the copy's folder (created).
        scale: multiplies the participants and conversations (and so the pairs).
        seed: any integer; the same seed gives the same files.
    """
    rng = random.Random(f"prb-real-people:prism:{seed}")
    text = Text(rng)
    surveyed, active = round(PRISM_SURVEYED * scale), round(PRISM_ACTIVE * scale)
    total, later = round(PRISM_CONVERSATIONS * scale), round(PRISM_LATER_TURNS * scale)
    # Later turns spread over the conversations: 0-4 each, summing to ``later`` exactly.
    extra = [later // total] * total
    for n in rng.sample(range(total), later - sum(extra)):
        extra[n] += 1
    survey = [survey_row(f"user{u:05d}", full=u % 5 != 0,
                         self_description=f"Person {u}: " + text.answer("", 300) if u % 5 != 0 else None,
                         system_string=f"Person {u} asks for: " + text.answer("", 200),
                         **({"survey_only": True} if u >= active else {}))
              for u in range(surveyed)]
    conversations = []
    for c in range(total):
        user = f"user{c % active:05d}"
        turns = []
        for t in range(1 + extra[c]):
            count = 4 if t == 0 else 2
            scores = [rng.randint(1, 100) for _ in range(count)]
            best = max(range(count), key=lambda j: scores[j])
            turns.append((text.prompt(f"P{c}.{t}:"),
                          [(text.answer(f"[{c}.{t}.{j}]"), scores[j], j == best) for j in range(count)]))
        row = conversation(f"c{c:06d}", user, turns, feedback=text.prompt("Feedback:") if c % 2 else None)
        row["conversation_type"] = PRISM_TYPES[c % 3]
        conversations.append(row)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "survey.jsonl", survey)
    write_jsonl(out / "conversations.jsonl", conversations)
    write_jsonl(out / "utterances.jsonl", [])
    write_jsonl(out / "metadata.jsonl", metadata_rows(survey, conversations, {}))
    return {"surveyed": surveyed, "conversations": total, "pairs": 3 * total + later}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder to write: community_alignment/ and prism/ under it")
    parser.add_argument("--scale", type=float, default=1.0, help="multiple of the release's pairs")
    parser.add_argument("--family", choices=("community_alignment", "prism", "both"), default="both")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    writers = {"community_alignment": write_community, "prism": write_prism}
    for family, writer in writers.items():
        if args.family in (family, "both"):
            started = time.perf_counter()
            counts = writer(args.out / family, args.scale, args.seed)
            print(f"{family}: {json.dumps(counts)} in {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
