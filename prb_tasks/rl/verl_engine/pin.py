"""The verl prb pins and the config keys that version reads: change them together.

``prb rl --engine verl`` writes Hydra overrides for one verl. verl moved the custom reward
function from the top-level ``custom_reward_function.*`` (the authors' ``verl.sh``, written for
the verl of their time) to ``reward.custom_reward_function.*``: 0.7.1 and 0.8.0 read the new key and
still migrate the old one, 0.9.0 and 0.9.1 keep the old block as a stub that hydra accepts and
``main_ppo`` never reads (``trainer/config/legacy_reward_impl.yaml``), so a run with the old key
trains on verl's default reward, which raises for ``data_source='prb-rl'``. :data:`VERL_VERSION`
is what the ``verl`` extra, ``constraints-verl.txt`` and the verl-real CI tier install
(tests/rl/test_verl_real.py checks the three agree and runs verl's own code on the keys below);
:data:`KEYS_FROM` is the oldest verl the keys work with, which the pre-launch check enforces.
"""

from __future__ import annotations

import re

#: The verl release prb is tested against (the ``verl`` extra, ``constraints-verl.txt``, .ci/verl-env).
VERL_VERSION = "0.9.1"
#: The oldest verl that reads :data:`REWARD_FUNCTION` (older ones read the top-level ``custom_reward_function``).
KEYS_FROM = "0.7.1"
#: Where verl reads the custom reward function's file (``.path``) and function (``.name``).
REWARD_FUNCTION = "reward.custom_reward_function"
#: Where verl reads the number of reward workers.
REWARD_WORKERS = "reward.num_workers"


def version_tuple(version: str) -> tuple[int, ...]:
    """``0.9.1`` -> ``(0, 9, 1)``: the leading release numbers (``0.10.0rc1`` -> ``(0, 10, 0)``, ``+cu121`` dropped).

    Args:
        version: a release number as ``importlib.metadata.version`` gives it.
    """
    match = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()
