"""The reward function verl calls: prb-rm's score / 10, or the authors' served reward model; 0.5 on failure.

verl's reward manager imports a file (``custom_reward_function.path``) and calls its
``compute_score`` once per response, by keyword: ``data_source``, ``solution_str`` (the
decoded response), ``ground_truth``, ``extra_info`` (the row's, with keys verl adds) and the
configured reward kwargs. prb writes, per reward model, a two-line module that binds
``compute_score`` to a :class:`VerlReward` read from a JSON file next to it
(:func:`write_reward_module`), so verl's processes need nothing but prb installed.

Two ways to score, as the authors' ``PPO/reward_function.py`` and ``reward_server.py``:

- ``rm``: prb-rm loaded in the reward worker; the RM reads the user turn ``query + profile``
  (no separator, as their server builds it) and the response;
- ``url``: their served shape: POST ``{"response_text", "query", "profile"}`` to the URL,
  read ``score`` from the JSON reply (their ``reward_server.py`` answers so).

Either way the reward is the score divided by ``divide_by`` (theirs: 10) and ``on_error`` (theirs:
0.5) when anything fails: a timeout, a refused connection, an HTTP error, a reply without a
number, an RM that raises. Each failure is printed on one line and counted.
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, model_validator

#: Their request timeout (seconds) and connection retries (``HTTPAdapter(max_retries=3)``).
TIMEOUT = 60.0
RETRIES = 3


class RewardConfig(BaseModel):
    """What one reward module scores with (the JSON file next to it).

    Attributes:
        rm_args: prb-rm's ``--model_args`` (scored in the reward worker), or None with ``url``.
        url: a served reward model in the authors' shape (their ``/score`` endpoint), or None.
        divide_by: the score is divided by this (their 10).
        on_error: the reward when scoring fails (their 0.5).
    """

    model_config = ConfigDict(extra="forbid")

    rm_args: Optional[str] = None
    url: Optional[str] = None
    divide_by: float = 10.0
    on_error: float = 0.5

    @property
    def loads_model(self) -> bool:
        """Whether each reward worker loads the RM itself (not served: no ``url``, no prb-rm ``endpoint=``)."""
        return self.url is None and "endpoint=" not in str(self.rm_args)

    @model_validator(mode="after")
    def _one_source(self) -> "RewardConfig":
        if (self.rm_args is None) == (self.url is None):
            raise ValueError("give exactly one of rm_args and url")
        return self


class VerlReward:
    """``compute_score`` in verl's custom-reward interface.

    Args:
        config: what to score with and how to scale.
    """

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self.failures = 0
        self._rm: Any = None
        # verl calls compute_score from a thread pool; prb-rm's scorer is not re-entrant.
        self._lock = threading.Lock()

    def __call__(self, data_source: Any = None, solution_str: str = "", ground_truth: Any = None,
                 extra_info: Optional[dict[str, Any]] = None, **_: Any) -> float:
        info = extra_info or {}
        query, profile = info.get("query", ""), info.get("profile", "")
        try:
            score = self._served(query, profile, solution_str) if self.config.url else \
                self._scored(query, profile, solution_str)
            return score / self.config.divide_by  # type: ignore[no-any-return,unused-ignore]
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - the authors' rule: any failure is the error reward
            self.failures += 1
            print(f"prb rl: reward failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                  f"reward {self.config.on_error}", file=sys.stderr)
            return self.config.on_error

    def probe(self) -> None:
        """Score one made-up response as verl's worker will score every one; raise what scoring raises.

        Run before training, so a reward model that cannot score there (one that reads the user's
        whole profile store, which verl's worker does not have) is refused at once, not rewarded
        0.5 for every response of an hour-long run.
        """
        question = "Which lens suits street photography at night?"
        posts = "Post 1 (Category: Photography):\nI shoot film on a 35mm camera."
        if self.config.url:
            self._served(question, posts, "A fast 35mm prime.")
        else:
            self._scored(question, posts, "A fast 35mm prime.")

    def _served(self, query: str, profile: str, response: str) -> Any:
        body = json.dumps({"response_text": response, "query": query, "profile": profile}).encode("utf-8")
        request = urllib.request.Request(str(self.config.url), data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        for attempt in range(RETRIES + 1):
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:
                    return json.loads(reply.read().decode("utf-8"))["score"]
            except urllib.error.HTTPError:
                raise  # an HTTP status is an answer: their adapter does not retry it
            except (urllib.error.URLError, ConnectionError) as exc:
                if attempt == RETRIES or isinstance(getattr(exc, "reason", None), TimeoutError):
                    raise
        raise AssertionError("unreachable")

    def _scored(self, query: str, profile: str, response: str) -> float:
        from prb_tasks.rm.inputs import RMInput

        with self._lock:
            if self._rm is None:
                from prb_tasks.rl.reward import load_rm

                self._rm = load_rm(str(self.config.rm_args))
            scores = self._rm.rewards([RMInput(query + profile, response, None, query)], disable_tqdm=True)
        return float(scores[0])


def load_reward(config_path: str) -> VerlReward:
    """The reward function described by a JSON file :func:`write_reward_module` wrote.

    Args:
        config_path: the JSON file.
    """
    return VerlReward(RewardConfig.model_validate_json(Path(config_path).read_text(encoding="utf-8")))


def write_reward_module(folder: Path, config: RewardConfig) -> Path:
    """Write ``reward.json`` and the module verl imports (``reward_function.py``); the module's path.

    Args:
        folder: where both files go (created).
        config: what the reward scores with.
    """
    folder.mkdir(parents=True, exist_ok=True)
    settings = folder / "reward.json"
    settings.write_text(config.model_dump_json(indent=2) + "\n", encoding="utf-8")
    module = folder / "reward_function.py"
    module.write_text('"""The reward function of prb rl --engine verl (written by prb; verl imports it)."""\n'
                      "from prb_tasks.rl.verl_engine.reward import load_reward\n\n"
                      f"compute_score = load_reward({str(settings.resolve())!r})\n", encoding="utf-8")
    return module
