"""Choose and build a scorer from validated ``--model_args``."""

from __future__ import annotations

from prb_tasks.rm.options import RMOptions
from prb_tasks.rm.scorers.base import Scorer
from prb_tasks.rm.scorers.lexical import BM25ProfileScorer, LengthScorer

SCORERS = ("length", "bm25", "embedding", "hf", "served", "trained")


def build_scorer(options: RMOptions, device_from_harness: bool = False) -> Scorer:
    """The scorer described by ``options``.

    Heavy modules (torch, transformers, sentence-transformers) are imported here only
    for the scorer that needs them.

    Args:
        options: validated model arguments.
        device_from_harness: ``options.device`` is lm-eval's ``--device`` default.
    """
    kind = options.kind
    if kind == "length":
        return LengthScorer()
    if kind == "bm25":
        return BM25ProfileScorer()
    if kind == "embedding":
        from prb_tasks.rm.scorers.embedding import EmbeddingScorer

        return EmbeddingScorer(top_k=options.embed_top_k, question_weight=options.embed_question_weight,
                               max_posts=options.embed_max_posts, device=options.device, dtype=options.dtype,
                               backend=options.embed_backend,
                               batch_size=max(options.effective_batch_size, 32),
                               device_from_harness=device_from_harness)
    if kind == "trained":
        from prb_tasks.rm.scorers.trained import TrainedScorer

        assert options.pretrained is not None  # checked by RMOptions
        return TrainedScorer(options.pretrained, options.device, options.effective_batch_size, device_from_harness)
    if kind == "hf":
        if options.protocol == "official":
            from prb_tasks.common.harness_args import current
            from prb_tasks.rm.official_pipelines import pipeline_for

            # Each benchmark's authors feed the model their own way: the run's tasks say whose.
            run = current()
            pipeline = pipeline_for(run.tasks if run is not None else [])
            if pipeline is not None:
                from prb_tasks.rm.scorers.hf_authors import AuthorsHFScorer

                return AuthorsHFScorer(options, pipeline, device_from_harness=device_from_harness)
            from prb_tasks.rm.scorers.hf_official import OfficialHFScorer

            return OfficialHFScorer(options, device_from_harness=device_from_harness)
        from prb_tasks.rm.scorers.hf import HFScorer

        return HFScorer(options, device_from_harness=device_from_harness)
    from prb_tasks.rm.scorers.served import ServedScorer

    assert options.endpoint is not None  # checked by RMOptions
    return ServedScorer(options.endpoint, api=options.api, api_path=options.effective_api_path,
                        served_model=options.served_model, head=options.head,
                        num_concurrent=options.num_concurrent, max_retries=options.max_retries,
                        timeout=options.timeout)
