"""Check the ``--metadata`` keys a task family is given, for every family.

lm-eval calls a task's ``custom_dataset`` loader with one flat dict: the YAML's own
``metadata`` (``version``), lm-eval's bookkeeping (``config_source``), every
``--metadata`` key *and every ``--model_args`` key*. A misspelled option
(``datadir``, ``K``) would otherwise vanish silently, so each family declares the
keys it understands in a :class:`MetadataSpec` and calls :func:`check_options`.

Which keys came from ``--model_args`` (and so are not ours to judge):

1. ``prb eval`` parses its command line with lm-eval's own parser and declares the
   ``--model_args`` and ``--metadata`` keys (:mod:`prb_tasks.common.harness_args`);
2. under plain ``lm_eval`` the process's command line is parsed the same way;
3. otherwise (lm-eval's Python API) the origin of a key cannot be known, so only
   keys that look like a misspelling of one of the family's keys are refused; any
   other unknown key is taken for a model argument.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.harness_args import current
from prb_tasks.common.suggest import close_matches, did_you_mean

#: Keys lm-eval itself adds to what a loader receives.
HARNESS_KEYS = frozenset({"version", "config_source", "_metadata"})


class MetadataError(PRBError):
    """An unknown or contradictory ``--metadata`` key; one line."""


@dataclass(frozen=True)
class MetadataSpec:
    """The ``--metadata`` keys one task family understands.

    A family exposes its spec as ``METADATA`` in its document builder (a module its
    registered benchmark family names, :mod:`prb_tasks.data.families`); ``prb eval`` finds
    it there (:func:`all_specs`) and checks the keys before any model loads, for runs whose
    tasks all live in folders named like a spec's family.

    Attributes:
        family: the family's task folder name (``prb_tasks/tasks/<family>/``), also
            used in messages.
        keys: accepted key -> one-line meaning.
        fixed: keys the family's YAMLs pass through ``dataset_kwargs`` (``subset``,
            ``variant``, ``source``); never the user's.
    """

    family: str
    keys: Mapping[str, str]
    fixed: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_options(cls, family: str, model: Any, fixed: frozenset[str] = frozenset()) -> MetadataSpec:
        """The spec of a family whose options are a pydantic model (keys: its fields).

        Args:
            family: task family name for messages.
            model: the pydantic options class; each field's description is its meaning.
            fixed: the family's own ``dataset_kwargs`` keys.
        """
        return cls(family, {name: field.description or "" for name, field in model.model_fields.items()}, fixed)

    def accepted(self) -> str:
        """The accepted keys as ``a, b, c`` for messages."""
        return ", ".join(sorted(self.keys))


def user_keys(options: Mapping[str, Any]) -> tuple[set[str], bool]:
    """The keys of ``options`` the user meant as ``--metadata``, and whether that is certain.

    Args:
        options: what the loader received, minus its ``dataset_kwargs``.
    """
    given = set(options) - HARNESS_KEYS
    run = current()
    if run is None:
        return given, False
    # Keys given to --model_args only are the model's business; keys from neither
    # option come from the task's own YAML.
    return given & set(run.metadata_keys), True


def task_name(options: Mapping[str, Any]) -> str | None:
    """The task a loader is building, from the YAML path lm-eval passes (ours are named after their task)."""
    origin = options.get("config_source")
    if not origin or origin == "inline":
        return None
    from pathlib import Path

    return Path(str(origin)).stem


def check_options(spec: MetadataSpec, options: Mapping[str, Any], task: str | None = None,
                  whole_run: bool = False) -> dict[str, Any]:
    """The family's own keys out of ``options``; an unknown ``--metadata`` key is an error.

    Args:
        spec: the family's accepted keys.
        options: every keyword the loader received except the ``dataset_kwargs``.
        task: task name or YAML for messages, if known.
        whole_run: ``spec`` holds the keys of every task of the run (``prb eval``'s check), so a key of
            another family is refused too; else it is taken for that family's (one ``--metadata`` serves
            every task of a run).

    Raises:
        MetadataError: one line naming the key, a near match and the accepted keys.
    """
    candidates, certain = user_keys({k: v for k, v in options.items() if k not in spec.fixed})
    where = f" for {task}" if task else f" for {spec.family} tasks"
    unknown = sorted(candidates - set(spec.keys))
    owners: dict[str, list[str]] = {}
    for other in all_specs() if unknown else ():
        for k in other.keys:
            owners.setdefault(k, []).append(other.family)
    if unknown and not whole_run:
        # One --metadata serves every task of a run: a key another family takes (say
        # PersonalLLM's data_dir next to a custom-data task) is that family's. `prb eval`
        # checks before the run that some family in it takes each key.
        unknown = [k for k in unknown if k not in owners]
    for key in unknown:
        if not certain and not close_matches(key, spec.keys) and key not in owners:
            continue  # lm-eval's Python API: probably a model argument
        families = sorted(set(owners.get(key, ())))
        if len(families) > 3:
            named = f"tasks of {', '.join(families[:3])} and {len(families) - 3} more families"
        else:
            named = " and ".join(filter(None, [", ".join(families[:-1]), families[-1]])) + " tasks" if families else ""
        owner = f" (a key of the {named}, none of which this run has)" if families else ""
        raise MetadataError(
            f"prb: unknown --metadata key '{key}'{where}{did_you_mean(key, spec.keys)}{owner}; "
            f"accepted: {spec.accepted()}"
        )
    return {k: v for k, v in options.items() if k in spec.keys}


def unused_notes(unused: Mapping[str, str], given: Mapping[str, Any], task: str, by_name: bool = True) -> list[str]:
    """One note (one line, wrapped at 120 columns) per key of ``unused`` the user gave as ``--metadata``.

    A note, not a refusal: one ``--metadata`` serves every task of a run, so a key one task reads
    (``--tasks 'personal_reward_bench_arena*'`` with ``pgenrm_prompts``) reaches its sibling tasks too;
    those must say that they left it alone rather than give a number the key did not shape.

    Args:
        unused: key -> why this task leaves it alone (how to get it read: the task that does).
        given: what the loader received (a key named by ``--model_args`` alone is the model's, not noted).
        task: names the task where lm-eval's ``config_source`` does not.
        by_name: name the task from ``config_source``; False: always ``task`` (a family with one task
            per subset names its variant once, not every subset).
    """
    from prb_tasks.common.terminal import fit

    keys = user_keys(given)[0]
    name = (task_name(given) if by_name else None) or task
    return [fit(f"prb: {key}={given[key]} ignored by {name}: {why}") for key, why in unused.items()
            if key in keys and given[key] not in (None, "")]


#: Notes printed by this process without a task's own name: the subsets of one variant say it once.
_NOTED: set[str] = set()


def note_unused(unused: Mapping[str, str], given: Mapping[str, Any], task: str, by_name: bool = True) -> None:
    """Print :func:`unused_notes` to stderr (arguments as there); with ``by_name`` False each line once
    per process."""
    import sys

    for line in unused_notes(unused, given, task, by_name):
        if not by_name and line in _NOTED:
            continue
        _NOTED.add(line)
        print(line, file=sys.stderr)


def describe_keys(spec: MetadataSpec) -> list[str]:
    """``key: meaning`` lines, for help texts."""
    return [f"{key}: {meaning}" for key, meaning in sorted(spec.keys.items())]


def data_dir_preflight(resolve: Callable[[Any], Any], options: Any = None,
                       layout: Callable[[Any, Any, dict[str, Any]], object] | None = None) -> Callable[..., None]:
    """A family's ``preflight`` for ``prb eval`` (run before a model loads): its options' values, its
    ``data_dir``, and that the folder holds the files the run's tasks read. A misspelt value
    (``"protocol": "lora"``), a path that is not a folder or another family's copy is one line now, not after a
    (perhaps large) model has loaded.

    Args:
        resolve: the family's ``resolve_data_dir`` (raises its one-line error on a bad path).
        options: the family's pydantic options model, whose values are checked first (None: none).
        layout: raises the family's one-line error for a folder without the files the tasks read; takes the
            folder, the options parsed (None without ``options``) and the run's tasks of the family.
    """
    def preflight(tasks: dict[str, Any], metadata: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
        parsed = None
        if options is not None:
            from prb_tasks.documents.options import parse_options

            parsed = parse_options(options, metadata)
        folder = resolve(metadata.get("data_dir"))
        if layout is not None and folder is not None:
            layout(folder, parsed, tasks)

    return preflight


def family_modules() -> dict[str, Any]:
    """Task family (folder) name -> the document builder that declares its ``METADATA``:
    the builders every registered benchmark family names (:mod:`prb_tasks.data.families`)."""
    import importlib

    from prb_tasks.data.families import document_modules

    found: dict[str, Any] = {}
    for name in document_modules():
        module = importlib.import_module(name)
        spec = getattr(module, "METADATA", None)
        if isinstance(spec, MetadataSpec):
            found[spec.family] = module
    return found


def all_specs() -> list[MetadataSpec]:
    """The spec of every family, sorted by family name."""
    return [module.METADATA for _family, module in sorted(family_modules().items())]
