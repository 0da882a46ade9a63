"""Facts about PersonalRewardBench's hub copies, read in the authors' loaders.

``SALT-NLP/SynthesizeMe`` (``synthesizeme/datasets/dataset.py``, ``utils/utils.py``) and P-GenRM's
``Tongyi-ConvAI/Qwen-Character`` (``Character-GenRM/pre_process/dataset.py``, ``utils.py``) both:

- load every split the hub copy has and concatenate them (``pd.concat`` over ``ds.keys()``), then
  group by ``user_id`` and take each user's rows whose ``split`` column is ``train``, ``val`` or ``test``
  (P-GenRM's PRISM loader drops every other ``split`` value explicitly);
- drop ``chosen_score``, ``rejected_score``, ``dataset``, ``agreement``, the query / response
  ``reasoning`` columns and their own judges' ``prediction_*`` / ``reasoning_*`` columns (P-GenRM keeps
  the two scores);
- read ``context`` as role/content turns; ``chosen`` and ``rejected`` as one ``{"role", "content"}``
  turn (P-GenRM reads ``chosen["content"]``) or a list of turns (SynthesizeMe formats either);
- SynthesizeMe orders a pair by the row's ``flip`` column where present.
"""

from __future__ import annotations

#: the family's registered name (``--family``, ``prb data download``).
FAMILY_NAME = "personal_reward_bench"

#: half -> (hub dataset, folder of a local copy: the hub name, as P-GenRM's ``data/`` holds it).
HALVES: dict[str, tuple[str, str]] = {
    "arena": ("MichaelR207/chatbot_arena_personalized_0125", "chatbot_arena_personalized_0125"),
    "prism": ("MichaelR207/prism_personalized_0125", "prism_personalized_0125"),
}
#: Each half's name in tables and messages.
HALF_NAMES = {"arena": "Chatbot Arena", "prism": "PRISM"}
#: The ``split`` values the authors' loaders keep, in their order.
USER_SPLITS = ("train", "val", "test")
#: Hub splits in the order ``datasets`` lists them (others follow, by name; ``val`` is one of those, after
#: ``test``: ``datasets.data_files`` keeps its own name for a ``data/{split}-NNNNN-of-NNNNN`` shard): the
#: concatenation order.
HUB_SPLIT_ORDER = ("train", "validation", "test")
ENV_VAR = "PRB_PERSONAL_REWARD_BENCH_DIR"
#: The history sizes of the k-history curve (P-GenRM uses 6).
K_CURVE = (0, 1, 2, 4, 6, 8)
#: P-GenRM's history pairs per test pair and its seed (``vllm_batch_inference.sh``: ``FEWSHOTS=6``).
PGENRM_HISTORY = 6
PGENRM_SEED = 42
