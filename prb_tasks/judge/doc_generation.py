"""Generation settings a document asks for (an authors' protocol), over the task YAML's.

A preset that reproduces an authors' script needs that script's generation settings (the
Best-of-N grader's 32 new tokens), but lm-eval gives every document of a task the YAML's
``generation_kwargs``, merged with the run's ``--gen_kwargs``. So such documents carry their
settings under :data:`~prb_tasks.documents.pairs.GENERATION` and prb-judge applies them here;
a key the user named in ``--gen_kwargs`` is an explicit choice and wins, with one line.
"""

from __future__ import annotations

import sys
from typing import Any

from prb_tasks.documents.pairs import GENERATION


def explicit_gen_kwargs() -> dict[str, Any]:
    """The ``--gen_kwargs`` the run's command line gave ({} when there is none or no command line)."""
    from prb_tasks.common.harness_args import current

    run = current()
    given = run.settings.get("gen_kwargs") if run is not None else None
    if isinstance(given, str):
        from lm_eval.utils import simple_parse_args_string

        given = simple_parse_args_string(given)
    return dict(given) if isinstance(given, dict) else {}


def document_generation(doc: Any, task_gen: dict[str, Any] | None, explicit: dict[str, Any],
                        said: set[tuple[str, str]], task: str | None = None) -> dict[str, Any] | None:
    """The generation settings one request goes out with.

    Args:
        doc: the request's document; its :data:`GENERATION` entry (if any) holds the settings
            its authors' protocol uses.
        task_gen: the settings lm-eval gives the request (the task YAML's, ``--gen_kwargs`` merged in).
        explicit: the run's own ``--gen_kwargs`` (:func:`explicit_gen_kwargs`); a key there wins.
        said: (task, key) pairs already told to the user; a new one is printed once, then added.
        task: the request's task name, for the line.
    """
    wanted = doc.get(GENERATION) if isinstance(doc, dict) else None
    if not isinstance(wanted, dict) or not wanted:
        return task_gen
    out = dict(task_gen or {})
    for key, value in wanted.items():
        if key not in explicit:
            out[key] = value
            continue
        if str(explicit[key]) != str(value) and (task or "", key) not in said:
            said.add((task or "", key))
            print(f"prb-judge: {task or 'a task'}: --gen_kwargs {key}={explicit[key]} is used, not the authors' "
                  f"{key}={value} this task's preset sets; drop it from --gen_kwargs to run as the authors do",
                  file=sys.stderr, flush=True)
    return out
