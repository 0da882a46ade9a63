"""A ``--tasks`` pattern of prb's own tasks narrowed to the ones the chosen backend can run.

``prb eval --model prb-rm --tasks 'personal_reward_bench_*'`` matches judge and scalar tasks alike;
lm-eval would hand the judge tasks to the reward model, which refuses them (or ``prb-judge`` would
refuse the scalar ones after spending its calls on the rest). A pattern whose fixed start names one of
prb's task folders is expanded here over prb's tasks and keeps those the backend runs; one line says
what was left out and which backend runs it. Other patterns (lm-eval's own tasks) are left to lm-eval.
"""

from __future__ import annotations

import fnmatch
import re

#: Backend -> the output types it runs.
_RUNS = {"prb-rm": ("multiple_choice", "loglikelihood"), "prb-judge": ("generate_until",)}
_OTHER = {"prb-rm": "prb-judge", "prb-judge": "prb-rm"}
_WILD = re.compile(r"[*?\[]")


def narrow(model: str, tasks: list[str]) -> tuple[list[str], list[str]]:
    """``tasks`` with each of prb's patterns replaced by the matching tasks ``model`` runs.

    Args:
        model: the ``--model`` name; only prb-rm and prb-judge are narrowed.
        tasks: the ``--tasks`` entries, comma lists split.

    Returns:
        The entries to run, and one line per pattern that left tasks out (empty when none did).
    """
    if model not in _RUNS:
        return tasks, []
    from prb_tasks.common.resources import tasks_dir
    from prb_tasks.common.taskindex import task_kinds

    folders = tuple(p.name for p in tasks_dir().iterdir() if p.is_dir())
    kinds = task_kinds()
    out: list[str] = []
    notes: list[str] = []
    for entry in tasks:
        found = _WILD.search(entry)
        if found is None or not entry[:found.start()].startswith(folders):
            out.append(entry)
            continue
        matched = sorted(t for t in kinds if fnmatch.fnmatchcase(t, entry))
        # A task that names its backend (the few-shot methods: prb-method) is that backend's alone.
        runs = [t for t in matched if kinds[t][0] in _RUNS[model] and not kinds[t][1]]
        if not runs or len(runs) == len(matched):
            out.append(entry)  # nothing to narrow, or nothing this backend runs: lm-eval says so
            continue
        out.extend(runs)
        left = len(matched) - len(runs)
        notes.append(f"prb eval: --tasks {entry}: {model} runs {len(runs)} of its {len(matched)} tasks; the other "
                     f"{left} need another backend ({_OTHER[model]} for the "
                     f"{'judge' if model == 'prb-rm' else 'scalar'} tasks; `prb tasks` lists them)")
    return out, notes
