"""Text-embedding features for the feature-based methods, from the shared sentence encoder.

PersonalLLM's responses carry ten reward-model scores; your own file carries none. With
``--metadata '{"features": "embedding"}'`` every response's features become its
all-MiniLM-L6-v2 embedding (:mod:`prb_tasks.text.encoder`, unit length, 384 numbers),
computed once per distinct response text, so the baselines over frozen features
(``lowrank``'s basis, ``similar_users``' agreement) run on any data.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from prb_tasks.fewshot.method import Pair, Response


def with_embeddings(by_user: dict[str, list[Pair]], device: str = "auto") -> dict[str, list[Pair]]:
    """The same pairs with each response's features replaced by its text embedding.

    Args:
        by_user: user id -> pairs.
        device: where the encoder runs (``auto``: CUDA, else MPS, else CPU).
    """
    from prb_tasks.text.encoder import shared_encoder

    texts = list(dict.fromkeys(r.text for pairs in by_user.values() for p in pairs for r in (p.chosen, p.rejected)))
    print(f"prb: few-shot features: embedding {len(texts)} distinct responses with all-MiniLM-L6-v2",
          file=sys.stderr)
    vectors = shared_encoder(device).encode(texts, normalize=True, progress=len(texts) > 512)
    index = {text: np.asarray(v, dtype=np.float64) for text, v in zip(texts, vectors)}

    def embedded(response: Response) -> Response:
        return Response(response.text, index[response.text])

    return {user: [replace(p, chosen=embedded(p.chosen), rejected=embedded(p.rejected)) for p in pairs]
            for user, pairs in by_user.items()}
