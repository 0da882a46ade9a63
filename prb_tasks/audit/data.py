"""The pairs ``prb audit`` looks at, read through each family's own document builder.

The data is chosen as for the tasks: a Personalized RewardBench folder (or ``sample``),
a PersonalLLM folder, or a preference file (or ``example``); the family is guessed as
``prb data validate`` guesses it. ``--metadata`` keys are the family's own (e.g.
``n_users`` and ``alpha`` for PersonalLLM) and are checked by its builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, ValidationError

from prb_tasks.common.errors import PRBError
from prb_tasks.common.metadata_arg import data_command_metadata
from prb_tasks.data.custom.sources import EXAMPLE
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.sources import SAMPLE

Family = Literal["personalized_rb", "personalllm", "custom"]
WHAT_TO_GIVE = ("give a Personalized RewardBench folder (<dir>/Art_and_Entertainment/...) or 'sample', "
                "a PersonalLLM folder (<dir>/data/test-*.parquet), or a preference file (.json/.jsonl) or 'example'")


@dataclass(frozen=True)
class AuditPair:
    """One preference pair as the shortcuts see it.

    Attributes:
        key: the pair's key (as in the tasks' documents).
        subset: the pair's subset.
        user: the user it comes from (None: the data has no users).
        question: the request.
        chosen: the response the user prefers.
        rejected: the other one.
        chosen_first: whether the data itself lists the chosen response first.
        profile_key: where the user's texts are kept (posts, or earlier choices).
    """

    key: str
    subset: str
    user: str | None
    question: str
    chosen: str
    rejected: str
    chosen_first: bool | None
    profile_key: str | None


@dataclass(frozen=True)
class AuditData:
    """The pairs of one data set and what to call it."""

    family: Family
    label: str
    pairs: list[AuditPair]


class AuditRequest(BaseModel):
    """What the user asked for on the command line.

    Attributes:
        data: a folder, a preference file, ``sample`` or ``example``.
        family: what ``data`` holds (None: guessed).
        metadata: the family's ``--metadata`` keys, as a JSON object.
    """

    model_config = ConfigDict(extra="forbid")

    data: str
    family: Optional[Family] = None
    metadata: dict[str, Any] = {}


def parse_request(data: str, family: str | None, metadata: str | None) -> AuditRequest:
    """Validate the command line's values; a mistake is one :class:`PRBError` line.

    Args:
        data: the DATA argument.
        family: ``--family`` (None: guess).
        metadata: ``--metadata`` as given (JSON text) or None.
    """
    options = data_command_metadata(metadata, "prb audit", PRBError)
    try:
        return AuditRequest(data=data, family=family, metadata=options)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PRBError(f"prb audit: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None


def _family_of(request: AuditRequest) -> tuple[Family, Path | None]:
    if request.data == SAMPLE and not Path(SAMPLE).exists():
        return request.family or "personalized_rb", None
    if request.data == EXAMPLE and not Path(EXAMPLE).exists():
        return request.family or "custom", None
    path = Path(request.data).expanduser()
    if not path.exists():
        raise PRBError(f"prb audit: '{request.data}' does not exist; {WHAT_TO_GIVE}")
    if path.is_file() and path.suffix not in (".json", ".jsonl"):
        raise PRBError(f"prb audit: '{request.data}' is a file but not a preference file (.json or .jsonl); "
                       f"{WHAT_TO_GIVE}")
    from prb_tasks.data.family import detect_family

    family = request.family or detect_family(path)
    if family == "custom" and not path.is_file():
        raise PRBError(f"prb audit: '{request.data}' is a folder; --family custom needs a preference file "
                       "(.json or .jsonl)")
    if family != "custom" and not path.is_dir():
        raise PRBError(f"prb audit: '{request.data}' is a file; --family {family} needs the data folder")
    return family, path


def _pairs_of(docs: list[dict[str, Any]]) -> list[AuditPair]:
    return [AuditPair(str(d["pair_key"]), str(d["subset"]),
                      None if d.get("user_id") is None else str(d["user_id"]), str(d["question"]),
                      str(d["choices"][0]), str(d["choices"][1]), d.get("chosen_first"), d.get("profile_key"))
            for d in docs]


def _personalized_rb(location: str, options: dict[str, Any]) -> list[AuditPair]:
    from prb_tasks.data.personalized_rb.reader import split_files
    from prb_tasks.data.personalized_rb.sources import resolve_data_dir
    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.documents.personalized_rb import build_docs

    folder = resolve_data_dir(location)
    assert folder is not None
    present = []
    for subset in SUBSETS:
        try:
            split_files(folder, subset)
        except DataError:
            continue
        present.append(subset)
    if not present:
        raise PRBError(f"prb audit: '{location}' holds no Personalized RewardBench subset folder "
                       f"({', '.join(s.config for s in SUBSETS)}); {WHAT_TO_GIVE}")
    pairs: list[AuditPair] = []
    for subset in present:
        pairs += _pairs_of(build_docs(subset.config, "scalar", data_dir=location, **options))
    return pairs


def _check_keys(family: Family, options: dict[str, Any]) -> None:
    """Every --metadata key here is the user's, so an unknown one is always an error (the
    builders cannot be strict: under lm-eval they also receive the model's arguments)."""
    import importlib

    from prb_tasks.common.suggest import did_you_mean

    spec = importlib.import_module(f"prb_tasks.documents.{family}").METADATA
    for key in sorted(set(options) - set(spec.keys)):
        raise PRBError(f"prb audit: unknown --metadata key '{key}' for {spec.family} data"
                       f"{did_you_mean(key, spec.keys)}; accepted: {spec.accepted()}")


def load_audit_data(request: AuditRequest) -> AuditData:
    """Read the pairs ``request`` names.

    Args:
        request: validated command-line values.
    """
    family, path = _family_of(request)
    location = str(path) if path is not None else request.data
    label = {SAMPLE: "the bundled synthetic sample", EXAMPLE: "the bundled example preference file"}.get(
        request.data, location)
    options = dict(request.metadata)
    try:
        _check_keys(family, options)
        if family == "personalized_rb":
            pairs = _personalized_rb(location, options)
        elif family == "personalllm":
            from prb_tasks.documents.personalllm import build_docs as personalllm_docs

            pairs = _pairs_of(personalllm_docs("scalar_history", data_dir=location, **options))
        else:
            from prb_tasks.documents.custom import build_docs as custom_docs

            pairs = _pairs_of(custom_docs("scalar_history", data_path=location, **options))
    except PRBError as exc:
        raise PRBError(str(exc).replace("prb: ", "prb audit: ", 1)) from None
    if not pairs:
        raise PRBError(f"prb audit: '{request.data}' has no preference pairs")
    return AuditData(family, label, pairs)
