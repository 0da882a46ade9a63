"""Facts about the Community Alignment release (HF ``facebook/community-alignment-dataset``,
CC-BY-4.0; code book: Appendix I of arXiv 2507.09650).

Neither the code book (the paper's appendix) nor the authors' repository
(``facebookresearch/community-alignment-dataset``) could be read here; what follows was checked
against the dataset card and against several independent public loaders of the files:

- the card's first version: two CSV files, ``data/full_community_alignment.csv`` (may miss
  turns within a conversation) and ``data/filtered_community_alignment.csv`` (conversations
  without missing middle turns), loaded as the splits ``full`` and ``filtered``; the flag
  ``is_pregenerated_first_prompt`` and the language ``assigned_lang``;
- the card's later version (v1.1, 41K comparisons more): loaders read one file at the top of
  the repository, ``community_alignment.csv`` (the split ``train``), with the same columns and a
  ``wave`` column;
- the columns of one row (one annotator's conversation of up to four turns), in the order a
  loader that names every column lists them: ``conversation_id``, ``assigned_lang``,
  ``annotator_id``; per turn ``<turn>_turn_prompt``, ``<turn>_turn_responses`` (all of the
  turn's responses in one cell; prb reads the lettered ones), ``<turn>_turn_response_a`` ..
  ``_d``, ``<turn>_turn_preferred_response`` (``response_a`` .. ``response_d``),
  ``<turn>_turn_feedback``; ``annotator_age``, ``annotator_gender``,
  ``annotator_education_level``, ``annotator_political``, ``annotator_ethnicity``,
  ``annotator_country``, ``is_pregenerated_first_prompt``, ``in_balanced_subset``,
  ``in_balanced_subset_10``.
"""

from typing import Literal

HF_REPO = "facebook/community-alignment-dataset"
#: ``split`` option -> the file of a copy (the newest layout first: ``auto`` takes the first present).
FILES = {"latest": "community_alignment.csv", "filtered": "data/filtered_community_alignment.csv",
         "full": "data/full_community_alignment.csv"}
DEFAULT_SPLIT: Literal["auto"] = "auto"
SPLITS = ("auto", *FILES)
ENV_VAR = "PRB_COMMUNITY_ALIGNMENT_DIR"
TURNS = ("first", "second", "third", "fourth")
LETTERS = ("a", "b", "c", "d")
#: A response cell holding this text is an empty response (public loaders of the files drop it so).
EMPTY_MARK = "EMPTY STRING"
#: The generator's end-of-text token, left at the end of some answers (public loaders strip it).
END_OF_TEXT = "<|end_of_text|>"
#: Annotator columns shown to a profile-aware model, with the name it is shown under.
ATTRIBUTES = (("annotator_age", "age"), ("annotator_gender", "gender"),
              ("annotator_education_level", "education level"), ("annotator_political", "political leaning"),
              ("annotator_ethnicity", "ethnicity"), ("annotator_country", "country"))
