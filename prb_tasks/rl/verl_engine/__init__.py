"""``prb rl --engine verl``: PPO on verl as the authors' ``PPO/`` runs it (issue 45).

prb writes verl's inputs (:mod:`.rows`: the parquet data; :mod:`.reward`: the custom reward
function; :mod:`.overrides`: the Hydra overrides of their ``verl.sh``), runs
``python -m verl.trainer.main_ppo`` and merges the FSDP shards with verl's own merger
(:mod:`.train`). :mod:`.preflight` refuses, in one line and before anything is written, a
machine without verl, without a GPU, or a Ray cluster that cannot be reached. Nothing here
imports verl: the CPU tests run without it.
"""

__all__: list[str] = []
