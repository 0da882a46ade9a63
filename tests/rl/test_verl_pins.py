"""The verl prb pins and the keys it writes move together (prb_tasks/rl/verl_engine/pin.py), in every file
that installs verl: the extra, the GPU environment's constraints, the CI side environment's, the lock."""

from __future__ import annotations

import re
from pathlib import Path

from prb_tasks.rl.presets import PRESETS
from prb_tasks.rl.verl_engine.overrides import build_overrides
from prb_tasks.rl.verl_engine.pin import KEYS_FROM, REWARD_FUNCTION, VERL_VERSION, version_tuple

ROOT = Path(__file__).resolve().parents[2]


def test_every_install_names_the_pinned_verl() -> None:
    pins = {name: re.findall(r"^verl(?:\[vllm\])?==([\w.]+)", (ROOT / name).read_text(encoding="utf-8"), re.M)
            for name in ("constraints.txt", "constraints-verl.txt", "constraints-verl-ci.txt")}
    assert pins == {name: [VERL_VERSION] for name in pins}
    extra = re.search(r'^verl = \[(.*)\]$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert extra and f'"verl[vllm]=={VERL_VERSION}"' in extra.group(1)
    assert f"verl=={VERL_VERSION}" in (ROOT / ".ci" / "lock").read_text(encoding="utf-8")
    assert version_tuple(VERL_VERSION) >= version_tuple(KEYS_FROM)


def test_the_overrides_use_the_pinned_keys_only() -> None:
    out = build_overrides(parquet=Path("p"), policy="m", reward_module=Path("/r.py"), checkpoints=Path("c"),
                          experiment="e", preset=PRESETS["paper"], gpus_per_node=4, reward_workers=1)
    keys = [item.split("=", 1)[0] for item in out]
    assert f"{REWARD_FUNCTION}.path" in keys and f"{REWARD_FUNCTION}.name" in keys
    assert not [k for k in keys if k.startswith("custom_reward_function.") or k.endswith("log_prob_micro_batch_size")]


def test_version_numbers_compare_by_release() -> None:
    assert version_tuple("0.10.0rc1") > version_tuple("0.9.1") > version_tuple("0.7.1+cu121") > version_tuple("0.6")
    assert version_tuple("x") == ()
