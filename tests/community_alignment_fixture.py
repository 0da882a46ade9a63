"""Write small Community Alignment copies in the exact HF layout (``data/filtered_community_alignment.csv``
and ``data/full_community_alignment.csv``), with the release's column names: one row per
annotator's conversation, up to four turns of up to four responses each."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

TURNS = ("first", "second", "third", "fourth")
COLUMNS = (["conversation_id", "assigned_lang", "annotator_id"]
           + [f"{t}_turn_{f}" for t in TURNS for f in ("prompt", "response_a", "response_b", "response_c",
                                                        "response_d", "preferred_response", "feedback")]
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
        row[f"{name}_turn_preferred_response"] = f"response_{preferred}" if preferred else ""
        row[f"{name}_turn_feedback"] = feedback
    row.update({f"annotator_{k}": v for k, v in attributes.items()})
    return row


def ca_rows() -> list[dict[str, Any]]:
    """Three French annotators on one shared pre-generated prompt (two pick d, one picks a), one of
    them with a second, two-turn conversation; a Hindi annotator with a single pair and no
    attributes; an English conversation whose second turn has no preference."""
    fr = {"age": "35-44", "gender": "Female", "education_level": "Bachelor's degree", "political": "Centre",
          "ethnicity": "White", "country": "France"}
    return [
        ca_row(1, 101, "fr", [(SHARED_PROMPT, SHARED, "d", "Chaque famille est différente.")], **fr),
        ca_row(2, 102, "fr", [(SHARED_PROMPT, SHARED, "d", "")], **{**fr, "gender": "Male"}),
        ca_row(3, 103, "fr", [(SHARED_PROMPT, SHARED, "a", "La discipline compte.")], **{**fr, "age": "65+"}),
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


def write_ca(root: Path, rows: list[dict[str, Any]] | None = None, full: list[dict[str, Any]] | None = None) -> Path:
    """Write both CSV files under ``root/data/`` (the full file: ``full``, else the same rows); returns ``root``."""
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name, chosen in (("filtered", rows), ("full", full if full is not None else rows)):
        with (data / f"{name}_community_alignment.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(ca_rows() if chosen is None else chosen)
    return root
