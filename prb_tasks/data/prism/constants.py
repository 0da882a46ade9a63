"""Facts about the PRISM release (HF ``HannahRoseKirk/prism-alignment``; code book: the GitHub
repository ``HannahKirk/prism-alignment``, ``prism_codebook.pdf`` and the notebook
``notebooks/pre-release processing/04_codebooks.ipynb``; rows built by
``src/data_processing/process_conversations.py``)."""

HF_REPO = "HannahRoseKirk/prism-alignment"
#: The hub's files (its dataset card's four configs, each one file at the top of the repository).
SURVEY = "survey.jsonl"
CONVERSATIONS = "conversations.jsonl"
UTTERANCES = "utterances.jsonl"
METADATA = "metadata.jsonl"
#: What prb reads: the other two hold the same texts in long format and per-text flags.
REQUIRED = (SURVEY, CONVERSATIONS)
ENV_VAR = "PRB_PRISM_DIR"
#: Published sizes (the code book's counts): people surveyed, conversations.
PUBLISHED_PEOPLE = 1500
PUBLISHED_CONVERSATIONS = 8011
