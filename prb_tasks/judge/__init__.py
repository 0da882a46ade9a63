"""``prb-judge``: a litellm-backed generative judge for lm-eval.

One module per job:

* :mod:`.options` -- the settings schema that ``--model_args`` and configs share;
* :mod:`.configs` -- the bundled YAML judge configs, and ``--model_args`` merged over one;
* :mod:`.request` -- one chat request and its cache identity;
* :mod:`.client` / :mod:`.direct` -- one call through litellm, or straight to an
  OpenAI-compatible server, with errors classified;
* :mod:`prb_tasks.common.retry`, :mod:`.limiter` -- backoff, adaptive concurrency, rpm/tpm;
* :mod:`.answer_cache` -- the answer cache: every answer paid for, JSON only, on disk
  (not :mod:`.prompt_cache`, the providers' prompt caching);
* :mod:`.output_tokens` -- what earlier answers cost in output tokens (for dry runs);
* :mod:`.pricing`, :mod:`.usage` -- dollars, tokens, latency, the usage summary;
* :mod:`.runner` -- async orchestration and the progress bar;
* :mod:`.model` -- the lm-eval ``LM`` (registered lazily as ``prb-judge``).

Importing this package is cheap: litellm is imported only when a call is made.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.judge.configs import list_configs, load_config, resolve_settings
    from prb_tasks.judge.model import JudgeLM
    from prb_tasks.judge.options import JudgeSettings, parse_config_file

__all__ = ["JudgeLM", "JudgeSettings", "list_configs", "load_config", "parse_config_file", "resolve_settings"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.judge.configs": ("list_configs", "load_config", "resolve_settings"),
    "prb_tasks.judge.model": ("JudgeLM",),
    "prb_tasks.judge.options": ("JudgeSettings", "parse_config_file"),
})
