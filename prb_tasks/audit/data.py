"""The pairs ``prb audit`` looks at, read through each family's own document builder.

The data is chosen as for the tasks: a Personalized RewardBench folder (or ``sample``),
a PersonalLLM folder, or a preference file (or ``example``); the family is guessed as
``prb data validate`` guesses it. ``--metadata`` keys are the family's own (e.g.
``n_users`` and ``alpha`` for PersonalLLM) and are checked by its builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from prb_tasks.common.errors import PRBError
from prb_tasks.common.metadata_arg import data_command_metadata
from prb_tasks.data import families
from prb_tasks.data.custom.sources import EXAMPLE
from prb_tasks.data.errors import NoDataError
from prb_tasks.data.personalized_rb.sources import SAMPLE


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
        item: what another person's identical pair shares (the request and the two answers,
            hashed), where the data has people answering the same pair; None otherwise.
        language: the pair's language, where the data says ("" otherwise).
        country: the person's country, where the data says ("" otherwise).
        chosen_id: the id of the chosen answer the documents carry (``chosen_hash``), for the
            majority baseline ("" when they carry none: the text stands for itself).
        conversation_type: the kind of conversation, where the data says ("" otherwise).
        cohort: the protocol's group of the person (LoRe: seen or unseen user; "" otherwise).
        gap_bucket: how clear the preference was, where the data rated it ("" otherwise).
    """

    key: str
    subset: str
    user: str | None
    question: str
    chosen: str
    rejected: str
    chosen_first: bool | None
    profile_key: str | None
    item: str | None = None
    language: str = ""
    country: str = ""
    chosen_id: str = ""
    conversation_type: str = ""
    cohort: str = ""
    gap_bucket: str = ""


@dataclass(frozen=True)
class AuditData:
    """The pairs of one data set and what to call it."""

    family: str
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
    family: Optional[str] = None
    metadata: dict[str, Any] = {}

    @field_validator("family")
    @classmethod
    def _registered(cls, value: Optional[str]) -> Optional[str]:
        return families.check_choice(value, "audit")


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


def _family_of(request: AuditRequest) -> tuple[families.BenchmarkFamily, Path | None]:
    owner = families.bundled(request.data)
    if owner is not None and not Path(request.data).exists():
        return families.get(request.family or owner.name), None
    path = Path(request.data).expanduser()
    if not path.exists():
        raise PRBError(f"prb audit: '{request.data}' does not exist; {families.what_to_give('audit')}")
    if path.is_file() and path.suffix not in (".json", ".jsonl"):
        raise PRBError(f"prb audit: '{request.data}' is a file but not a preference file (.json or .jsonl); "
                       f"{families.what_to_give('audit')}")
    family = families.get(request.family or families.detect(path))
    if family.audit is None:
        # Guessed from the layout (a named family without an audit is refused by the request's validator).
        raise PRBError(f"prb audit: '{request.data}' looks like {family.describe}, which prb audit does not read; "
                       f"it reads {families.accepted_data('audit')} (if it is one of those, name it with --family)")
    if family.data_is_file and not path.is_file():
        raise PRBError(f"prb audit: '{request.data}' is a folder; --family {family.name} needs a preference file "
                       "(.json or .jsonl)")
    if not family.data_is_file and not path.is_dir():
        raise PRBError(f"prb audit: '{request.data}' is a file; --family {family.name} needs the data folder")
    return family, path


def pairs_of(docs: list[dict[str, Any]]) -> list[AuditPair]:
    """The audit's view of a family's documents (as its audit source builds them)."""
    return [AuditPair(str(d["pair_key"]), str(d["subset"]),
                      None if d.get("user_id") is None else str(d["user_id"]), str(d["question"]),
                      str(d["choices"][0]), str(d["choices"][1]), d.get("chosen_first"), d.get("profile_key"),
                      d.get("item"), str(d.get("language") or ""), str(d.get("country") or ""),
                      str(d.get("chosen_hash") or ""), str(d.get("conversation_type") or ""),
                      str(d.get("cohort") or ""), _bucket(d))
            for d in docs]


def _bucket(doc: dict[str, Any]) -> str:
    # The rating-gap tag the people families put first (``gap 0`` ...), where the pair was rated.
    tags = doc.get("tags") or []
    return str(tags[0]) if doc.get("rating_gap") is not None and tags else ""


def _check_keys(family: families.BenchmarkFamily, options: dict[str, Any]) -> None:
    """Every --metadata key here is the user's, so an unknown one is always an error (the
    builders cannot be strict: under lm-eval they also receive the model's arguments)."""
    import importlib

    from prb_tasks.common.suggest import did_you_mean

    spec = importlib.import_module(family.documents[0]).METADATA
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
        assert family.audit is not None  # the request's validator admits audited families only
        pairs = pairs_of(families.load(family.audit)(location, options))
    except NoDataError as exc:
        raise PRBError(f"{str(exc).replace('prb: ', 'prb audit: ', 1)}; {families.what_to_give('audit')}") from None
    except PRBError as exc:
        raise PRBError(str(exc).replace("prb: ", "prb audit: ", 1)) from None
    if not pairs:
        raise PRBError(f"prb audit: '{request.data}' has no preference pairs")
    return AuditData(family.name, label, pairs)
