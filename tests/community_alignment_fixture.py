"""Write small Community Alignment copies in the exact HF layouts, with the release's columns in
their order (:mod:`prb_tasks.data.community_alignment.constants` says where each was read): the
first release's ``data/filtered_community_alignment.csv`` and ``data/full_community_alignment.csv``,
and the later single ``community_alignment.csv`` (the same columns and ``wave``). One row per
annotator's conversation, up to four turns of up to four responses each; the annotator columns
hold values of the release's answer scales (``18-34``, ``Post-secondary graduate``,
``Middle-of-the-road, centrist``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

TURNS = ("first", "second", "third", "fourth")
COLUMNS = (["conversation_id", "assigned_lang", "annotator_id"]
           + [f"{t}_turn_{f}" for t in TURNS for f in ("prompt", "responses", "response_a", "response_b",
                                                        "response_c", "response_d", "preferred_response",
                                                        "feedback")]
           + ["annotator_age", "annotator_gender", "annotator_education_level", "annotator_political",
              "annotator_ethnicity", "annotator_country", "is_pregenerated_first_prompt", "in_balanced_subset",
              "in_balanced_subset_10"])

SHARED_PROMPT = "Quelle est la meilleure façon d'élever des enfants ?"
SHARED = {"a": "Avec des règles claires et de la discipline.", "b": "En les laissant explorer librement.",
          "c": "En suivant les traditions familiales.", "d": "Cela dépend de chaque famille."}


def ca_row(conv: int, annotator: int, lang: str, turns: list[tuple[str, dict[str, str], str, str]],
           **attributes: str) -> dict[str, Any]:
    """A row: each turn is (prompt, {letter: response}, preferred letter or "", feedback)."""
    row: dict[str, Any] = {c: "" for c in COLUMNS}
    row.update({"conversation_id": str(conv), "assigned_lang": lang, "annotator_id": str(annotator),
                "is_pregenerated_first_prompt": "True", "in_balanced_subset": "False",
                "in_balanced_subset_10": "False"})
    for name, (prompt, responses, preferred, feedback) in zip(TURNS, turns):
        row[f"{name}_turn_prompt"] = prompt
        for letter, text in responses.items():
            row[f"{name}_turn_response_{letter}"] = text
        # All of the turn's responses in one cell (prb reads the lettered columns, never this one).
        row[f"{name}_turn_responses"] = json.dumps([t for t in responses.values() if t], ensure_ascii=False)
        row[f"{name}_turn_preferred_response"] = f"response_{preferred}" if preferred else ""
        row[f"{name}_turn_feedback"] = feedback
    row.update({f"annotator_{k}": v for k, v in attributes.items()})
    return row


def ca_rows() -> list[dict[str, Any]]:
    """Three French annotators on one shared pre-generated prompt (two pick d, one picks a), one of
    them with a second, two-turn conversation; a Hindi annotator with a single pair and no
    attributes; an English conversation whose second turn has no preference."""
    fr = {"age": "35-45", "gender": "Female", "education_level": "Post-secondary graduate",
          "political": "Middle-of-the-road, centrist", "ethnicity": "White", "country": "France"}
    return [
        ca_row(1, 101, "fr", [(SHARED_PROMPT, SHARED, "d", "Chaque famille est différente.")], **fr),
        ca_row(2, 102, "fr", [(SHARED_PROMPT, SHARED, "d", "")], **{**fr, "gender": "Male"}),
        ca_row(3, 103, "fr", [(SHARED_PROMPT, SHARED, "a", "La discipline compte.")], **{**fr, "age": "55+"}),
        ca_row(4, 101, "fr", [
            ("Propose un plat végétarien", {"a": "Un ratatouille.", "b": "Un steak.", "c": "", "d": ""}, "a", ""),
            ("Et un dessert ?", {"a": "Une tarte aux pommes.", "b": "Une glace.", "c": "", "d": ""}, "b",
             "Plus léger."),
        ], **fr),
        ca_row(5, 104, "hi", [("मुझे एक कविता सुनाओ", {"a": "चाँद की रोशनी...", "b": "मैं कविता नहीं लिख सकता।",
                                                     "c": "", "d": ""}, "a", "")]),
        ca_row(6, 105, "en", [("Tips for sleeping better?", {"a": "Keep a schedule.", "b": "Drink coffee."}, "a", ""),
                              ("And for naps?", {"a": "Keep them short.", "b": "Sleep all day."}, "", "")],
               country="United States"),
    ]


def _write(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def write_ca(root: Path, rows: list[dict[str, Any]] | None = None, full: list[dict[str, Any]] | None = None) -> Path:
    """Write the first release's two CSV files under ``root/data/`` (the full file: ``full``, else the
    same rows); returns ``root``."""
    for name, chosen in (("filtered", rows), ("full", full if full is not None else rows)):
        _write(root / "data" / f"{name}_community_alignment.csv", ca_rows() if chosen is None else chosen, COLUMNS)
    return root


def write_ca_latest(root: Path, rows: list[dict[str, Any]] | None = None, wave: str = "2") -> Path:
    """Write the later release's single ``root/community_alignment.csv`` (the columns, then ``wave``)."""
    chosen = [{**row, "wave": wave} for row in (ca_rows() if rows is None else rows)]
    _write(root / "community_alignment.csv", chosen, [*COLUMNS, "wave"])
    return root
