"""A digest of every document prb builds from a copy of PRISM and Community Alignment.

Run it before and after a change to the readers or the document builders: equal digests mean
every document of every variant (as lm-eval receives it, prompts taken out to the prompt store),
the prompt store's texts, the profile store's texts of each pair and ``prb audit``'s pairs are
byte-identical::

    python benchmarks/people_docs_digest.py /tmp/prb-people/0.01x

The folder is one written by ``real_people_data.py`` (its ``community_alignment`` and ``prism``
folders); with ``--fixtures DIR`` the test fixtures are written to ``DIR`` (once: the copies'
paths and times name the profile-store keys, so later runs must read the same files) and digested.
Not a test: it prints, the reader compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from prb_tasks.data import profile_store
from prb_tasks.documents import community_alignment, people, prism
from prb_tasks.prompts.prompt_store import doc_prompt

VARIANTS = people.VARIANTS
PRISM_PROTOCOLS = ({}, {"protocol": "prism"}, {"protocol": "lore"})


def _fold(digest: Any, docs: list[dict[str, Any]]) -> int:
    for doc in docs:
        prompt = doc_prompt(doc) if "prompt" in doc or "prompt_key" in doc else None
        texts = profile_store.lookup(doc["profile_key"]) if "profile_key" in doc else None
        digest.update(json.dumps([doc, prompt, texts], sort_keys=False, ensure_ascii=False, default=repr).encode())
        digest.update(b"\n")
    return len(docs)


def digests(ca: Path | None, pr: Path | None) -> dict[str, str]:
    """``family/variant[/options]`` -> the digest of its documents and their count."""
    out: dict[str, str] = {}
    runs: list[tuple[str, Any, Path, dict[str, Any]]] = []
    if ca is not None:
        runs.append(("community_alignment", community_alignment, ca, {}))
    if pr is not None:
        runs += [("prism", prism, pr, extra) for extra in PRISM_PROTOCOLS]
    for name, module, folder, extra in runs:
        label = name + "".join(f"/{k}={v}" for k, v in extra.items())
        for variant in VARIANTS:
            digest = hashlib.sha256()
            count = _fold(digest, module.load_dataset(variant=variant, data_dir=str(folder), **extra)["test"])
            out[f"{label}/{variant}"] = f"{digest.hexdigest()[:20]} ({count})"
        digest = hashlib.sha256()
        count = _fold(digest, module.audit_docs(str(folder), extra))
        out[f"{label}/audit"] = f"{digest.hexdigest()[:20]} ({count})"
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--fixtures"]:
        from tests.community_alignment_fixture import write_ca
        from tests.prism_fixture import many_rows, write_prism

        work = Path(argv[1])
        if not work.is_dir():
            write_ca(work / "community_alignment")
            write_prism(work / "prism", *many_rows())
        argv = [str(work)]
    root = Path(argv[0])
    found = digests(root / "community_alignment", root / "prism")
    for key, value in found.items():
        print(f"{key:50} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
