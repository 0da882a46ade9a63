"""Facts about the Community Alignment release (HF ``facebook/community-alignment-dataset``,
CC-BY-4.0; code book: Appendix I of arXiv 2507.09650).

The column names below were read from the dataset card (``assigned_lang``,
``is_pregenerated_first_prompt``, the two CSV files) and from public loaders of the data
(``annotator_id``, ``annotator_*`` attributes, ``<turn>_turn_prompt``,
``<turn>_turn_response_a`` .. ``_d``, ``<turn>_turn_preferred_response`` naming one of
``response_a`` .. ``response_d``, ``<turn>_turn_feedback``); the code book itself (the paper's
appendix) could not be read here.
"""

HF_REPO = "facebook/community-alignment-dataset"
#: ``split`` option -> the file under ``data/`` (the card: the full set may miss turns within
#: a conversation; the filtered set keeps conversations without missing middle turns).
FILES = {"filtered": "data/filtered_community_alignment.csv", "full": "data/full_community_alignment.csv"}
DEFAULT_SPLIT = "filtered"
ENV_VAR = "PRB_COMMUNITY_ALIGNMENT_DIR"
TURNS = ("first", "second", "third", "fourth")
LETTERS = ("a", "b", "c", "d")
#: Annotator columns shown to a profile-aware model, with the name it is shown under.
ATTRIBUTES = (("annotator_age", "age"), ("annotator_gender", "gender"),
              ("annotator_education_level", "education level"), ("annotator_political", "political leaning"),
              ("annotator_ethnicity", "ethnicity"), ("annotator_country", "country"))
