"""The benchmark families, registered once: every command reads its list here.

A family (Personalized RewardBench, PersonalLLM, custom preference files, RewardBench 2,
RM-Bench) is one :class:`BenchmarkFamily`, declared as ``FAMILY`` in its own data
package (``prb_tasks/data/<name>/family.py``) next to its loader. This module finds
those declarations and serves them to the commands: the ``--family`` choices of
``prb data download``, ``prb data validate``, ``prb audit`` and ``prb train``, the
validator and download of ``prb data``, the documents that ``prb audit`` reads, the
``--metadata`` keys ``prb eval`` checks, the tasks ``prb validity`` suggests.

The family's document builders, options and audit source live a layer up (in
``prb_tasks.documents``), so the declaration names them as ``"module:attribute"``
text, imported only when a command uses them (:func:`load`); the rest are plain values
and functions of the data package.

A plug-in (or a test) adds a family with :func:`register`.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.suggest import did_you_mean

#: The commands a family can take part in (``commands`` of :class:`BenchmarkFamily`).
COMMANDS = ("download", "validate", "audit", "train")
#: ``train`` of a family that trains on the seen users of its few-shot split (its ``fewshot``).
TRAIN_FROM_FEWSHOT = "fewshot"
#: What :func:`train_source` hands such a family to.
_FEWSHOT_TRAINER = "prb_tasks.train.sources:from_fewshot"


@dataclass(frozen=True)
class BenchmarkFamily:
    """One benchmark family: where its data comes from and which code reads it.

    Attributes:
        name: the ``--family`` value (``personalllm``).
        order: place in every list of families (choices, messages); lower first.
        validate: ``prb data validate``: ``(path, bundled) -> exit code``; prints counts,
            a problem as one line (``bundled``: the path is the bundled sample).
        documents: the ``prb_tasks.documents`` modules that build the family's tasks, each
            declaring ``METADATA`` (its task folder and ``--metadata`` keys); the first is
            the family's own.
        options: ``"module:Class"``: the pydantic model of the first builder's ``--metadata``.
        task_folders: the family's folders under ``prb_tasks/tasks/``.
        commands: the commands that accept the family (of :data:`COMMANDS`).
        data_is_file: the data is one file (a preference file), not a folder.
        detect: whether a path given without ``--family`` holds this family's data (from the
            layout alone); families are tried by ``detect_order``, and a path none claims is
            the first family's.
        detect_order: when ``detect`` is tried (lower first).
        bundled: a name that stands for data shipped with prb (``sample``), if any.
        bundled_path: where that data is (``() -> Path``).
        hub_repo: the HF dataset ``prb data download`` copies (None: nothing to download).
        hub_files: the file patterns it fetches (after the chosen subsets' folders).
        hub_parts: a family published as several HF datasets: (dataset, folder) pairs, each dataset
            fetched (``hub_files``) into its folder under the target; ``hub_repo`` is then the first.
        subset_files: ``--subset`` names -> file patterns, for a family downloaded by subset
            (raises :class:`~prb_tasks.data.errors.DataError` on an unknown name).
        whole: why ``--subset`` does not apply, for a family downloaded whole.
        audit: ``"module:function"``: ``(location, options) -> documents`` that ``prb audit``
            reads (None: no audit).
        describe: how to give the data, for messages (``a PersonalLLM folder (...)``).
        downstream_tasks: the family's Best-of-N tasks (``prb validity`` suggests them).
        pairwise_example: one pairwise task of the family, for the same suggestion.
        train: ``"module:function"`` that ``prb train`` reads its users from (None: the family
            does not train): ``(location, metadata) -> (people, few_shot)``, the seen users with
            their labelled pairs, and the few-shot split they come from (None where there is none);
            or :data:`TRAIN_FROM_FEWSHOT`: the seen users of the family's own few-shot split.
        fewshot: ``"module:function"`` that the ``fewshot`` tasks (``data_family: <name>``) read
            the family's users from: ``(options, featured) -> (FewshotData, DataSource, tag)``
            (:mod:`prb_tasks.documents.fewshot`); None: no few-shot tasks.
        users_have: what the family's users carry (demographics, profile), for a message
            naming what a method or a model cannot have.
        one_pair_per_user: each user has one labelled pair (no history to learn from).
    """

    name: str
    order: int
    validate: Callable[[Path, bool], int]
    documents: tuple[str, ...]
    options: str
    task_folders: tuple[str, ...]
    commands: frozenset[str] = field(default_factory=lambda: frozenset({"validate"}))
    data_is_file: bool = False
    detect: Callable[[Path], bool] | None = None
    detect_order: int = 50
    bundled: str | None = None
    bundled_path: Callable[[], Path] | None = None
    hub_repo: str | None = None
    hub_files: tuple[str, ...] = ()
    hub_parts: tuple[tuple[str, str], ...] = ()
    subset_files: Callable[[list[str] | None], list[str]] | None = None
    whole: str = ""
    audit: str | None = None
    describe: str = ""
    downstream_tasks: tuple[str, ...] = ()
    pairwise_example: str = ""
    train: str | None = None
    users_have: str = ""
    one_pair_per_user: bool = False
    fewshot: str | None = None

    def __post_init__(self) -> None:
        unknown = set(self.commands) - set(COMMANDS)
        if unknown:
            raise ValueError(f"family {self.name}: unknown commands {sorted(unknown)}; known: {COMMANDS}")
        if ("download" in self.commands) != (self.hub_repo is not None):
            raise ValueError(f"family {self.name}: 'download' needs hub_repo and hub_repo needs 'download'")
        if ("audit" in self.commands) != (self.audit is not None):
            raise ValueError(f"family {self.name}: 'audit' needs an audit source and an audit source needs 'audit'")
        if ("train" in self.commands) != (self.train is not None):
            raise ValueError(f"family {self.name}: 'train' needs a training source and a training source needs 'train'")
        if not self.documents:
            raise ValueError(f"family {self.name}: no document builder")
        if self.train == TRAIN_FROM_FEWSHOT and self.fewshot is None:
            raise ValueError(f"family {self.name}: train={TRAIN_FROM_FEWSHOT!r} needs a few-shot source (fewshot)")

    def download_command(self, folder: str | Path = "DIR") -> str:
        """The ``prb data download`` command line that fetches this family into ``folder`` (see ``download_command``).

        Args:
            folder: the target folder; ``DIR`` in a hint that says to run it elsewhere.
        """
        return download_command(self.name, folder)


_REGISTRY: dict[str, BenchmarkFamily] = {}
_FOUND = False


def _discover() -> None:
    """Read ``FAMILY`` from every ``prb_tasks/data/<package>/family.py``, once."""
    global _FOUND
    if _FOUND:
        return
    import prb_tasks.data as package

    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg:
            continue
        name = f"{package.__name__}.{info.name}"
        if importlib.util.find_spec(f"{name}.family") is None:
            continue
        declared = getattr(importlib.import_module(f"{name}.family"), "FAMILY", None)
        if isinstance(declared, BenchmarkFamily):
            _REGISTRY.setdefault(declared.name, declared)
    _FOUND = True


def register(family: BenchmarkFamily) -> BenchmarkFamily:
    """Add ``family`` to every command (a plug-in's own family); returns it.

    Raises:
        ValueError: another family already has the name.
    """
    _discover()
    if family.name in _REGISTRY and _REGISTRY[family.name] is not family:
        raise ValueError(f"a benchmark family named {family.name!r} is already registered")
    _REGISTRY[family.name] = family
    return family


def unregister(name: str) -> None:
    """Drop the family called ``name`` (tests that registered one clean up with this)."""
    _discover()
    _REGISTRY.pop(name, None)


def families(command: str | None = None) -> list[BenchmarkFamily]:
    """The registered families in their ``order``; only those ``command`` accepts, if given.

    Args:
        command: one of :data:`COMMANDS`, or None for all.
    """
    _discover()
    found = sorted(_REGISTRY.values(), key=lambda f: (f.order, f.name))
    return [f for f in found if command is None or command in f.commands]


def names(command: str | None = None) -> tuple[str, ...]:
    """The family names ``command`` accepts (all when None), for ``--family`` choices."""
    return tuple(f.name for f in families(command))


def families_by_name() -> dict[str, BenchmarkFamily]:
    """Every registered family by its name."""
    _discover()
    return dict(_REGISTRY)


def get(name: str) -> BenchmarkFamily:
    """The family called ``name``.

    Raises:
        PRBError: no such family (one line with a near match and the known names).
    """
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = names()
        raise PRBError(f"prb: unknown benchmark family '{name}'{did_you_mean(name, known)}; "
                       f"families: {', '.join(known)}") from None


def detect(path: Path) -> str:
    """The family whose layout ``path`` has (nothing is read); the first family when none claims it.

    Args:
        path: a file or folder given by the user (need not exist).
    """
    listed = families()
    for family in sorted((f for f in listed if f.detect is not None), key=lambda f: f.detect_order):
        assert family.detect is not None
        if family.detect(path):
            return family.name
    return listed[0].name


def bundled(name: str) -> BenchmarkFamily | None:
    """The family whose bundled data ``name`` stands for (``sample``), if any."""
    return next((f for f in families() if f.bundled is not None and f.bundled == name), None)


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names (imported now)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def train_source(family: BenchmarkFamily) -> Callable[[str, dict[str, Any]], Any]:
    """What ``prb train`` reads ``family``'s users with: ``(location, metadata) -> (people, few_shot)``.

    Args:
        family: a family whose ``train`` is declared.
    """
    if family.train is None:
        raise ValueError(f"family {family.name} does not train")
    if family.train == TRAIN_FROM_FEWSHOT:
        from functools import partial

        return partial(load(_FEWSHOT_TRAINER), family.name)
    return load(family.train)


def fewshot_source(name: str) -> Callable[..., Any]:
    """The few-shot users of the family called ``name`` (its ``fewshot``).

    Raises:
        PRBError: no such family, or it has no few-shot tasks (one line).
    """
    family = get(name)
    if family.fewshot is None:
        having = either(f.name for f in families() if f.fewshot is not None)
        raise PRBError(f"prb: family {name} has no few-shot tasks; these have: {having}")
    return load(family.fewshot)


def document_modules() -> list[str]:
    """Every registered family's document builders (each declares ``METADATA``), each once."""
    seen: dict[str, None] = {}
    for family in families():
        for module in family.documents:
            seen.setdefault(module, None)
    return list(seen)


def either(words: Iterable[str], last: str = " or ") -> str:
    """``a, b or c``: a list for a sentence."""
    items = list(words)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + last + items[-1]


def accepted_data(command: str) -> str:
    """What DATA may be for ``command``: each family's ``describe``, for help and messages."""
    return either((f.describe for f in families(command)), last=", or ")


def what_to_give(command: str) -> str:
    """The end of a message about a wrong DATA: ``give A, B, or C`` (:func:`accepted_data`)."""
    return "give " + accepted_data(command)


def check_choice(value: str | None, command: str) -> str | None:
    """The body of a pydantic validator for a ``family`` option.

    Returns ``value`` when ``command`` accepts that family (None passes); else raises
    pydantic's own message for a fixed choice.

    Args:
        value: the family named by the user, or None (guess it).
        command: one of :data:`COMMANDS`.
    """
    known = names(command)
    if value is None or value in known:
        return value
    from pydantic_core import PydanticCustomError

    raise PydanticCustomError("literal_error", "Input should be {expected}",
                              {"expected": either(repr(name) for name in known)})


def download_command(family: str, folder: str | Path = "DIR") -> str:
    """The ``prb data download`` command line that fetches ``family`` into ``folder``, as a user types it.

    It names ``--family``: without it the command copies the default family instead. Files the hub
    client already fetched into ``folder`` are kept, so it also fetches a copy's missing files. A
    function of the name, so a family's own reader can print it without importing its family module.

    Args:
        family: the family's registered name (``prb data download --family``).
        folder: the target folder (quoted for a POSIX shell where it needs it); ``DIR`` in a hint
            that says to run it elsewhere.
    """
    import shlex

    where = folder if folder == "DIR" else shlex.quote(str(folder))
    return f"prb data download {where} --family {family}"
