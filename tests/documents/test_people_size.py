"""What keeps the families of real people small at release size (issue 59, item 7) changes no output.

``prb audit`` reads the ``scalar_profile`` pairs without rendering one prompt (at PRISM's release
size the rendered histories peaked at 2.47 GB), yet sees the same pairs and, through the profile
store, the same texts of each person; documents are built with the cycle collector paused."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.common.memory import building
from prb_tasks.data import profile_store
from prb_tasks.documents import community_alignment, people, prism
from tests.community_alignment_fixture import write_ca
from tests.prism_fixture import many_rows, write_prism


def _copies(tmp_path: Path) -> list[tuple[Any, Path]]:
    return [(community_alignment, write_ca(tmp_path / "ca")), (prism, write_prism(tmp_path / "prism")),
            (prism, write_prism(tmp_path / "many", *many_rows()))]


def test_the_audit_renders_no_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("prb audit rendered a prompt it never reads")

    monkeypatch.setattr(people, "render", refuse)
    for module, folder in _copies(tmp_path):
        docs = module.audit_docs(str(folder), {})
        assert docs and all(d["prompt"] == d["question"] for d in docs)


def test_the_audit_sees_the_pairs_and_texts_of_the_scalar_profile_documents(tmp_path: Path) -> None:
    for module, folder in _copies(tmp_path):
        built = module.build_docs("scalar_profile", data_dir=str(folder))
        expected = [({k: v for k, v in d.items() if k != "prompt"}, profile_store.lookup(d["profile_key"]))
                    for d in built]
        audited = module.audit_docs(str(folder), {})
        got = [({k: v for k, v in d.items() if k != "prompt"}, profile_store.lookup(d["profile_key"]))
               for d in audited]
        assert got == expected
    # The last copy's people have histories: a pair's texts are more than the person's own two.
    assert max(len(texts) for _, texts in got) > 2


def test_building_pauses_the_collector_and_puts_it_back() -> None:
    assert gc.isenabled()
    with building():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with building():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
        gc.unfreeze()


def test_documents_share_their_key_table_and_a_turns_prompt_key(tmp_path: Path) -> None:
    import json
    import sys

    docs = community_alignment.load_dataset(variant="scalar", data_dir=str(write_ca(tmp_path / "ca")))["test"]
    first = docs[0]
    assert type(first) is dict and json.dumps(first) == json.dumps(dict(first)) and first == dict(first)
    # A dict on its layout's shared key table is smaller than a plain copy of it.
    assert sys.getsizeof(first) < sys.getsizeof(dict(first))
    by_turn: dict[str, list[str]] = {}
    for doc in docs:  # pair keys are person/conversation/turn/answer: a turn's pairs share one prompt
        by_turn.setdefault(doc["pair_key"].rsplit("/", 1)[0], []).append(doc["prompt_key"])
    shared = [keys for keys in by_turn.values() if len(keys) > 1]
    assert shared and all(k is keys[0] for keys in shared for k in keys)  # hashed once, one key string


def test_word_counts_are_those_of_str_split() -> None:
    import random

    from prb_tasks.documents.pairs import words

    # Every ASCII whitespace str.split() splits at (the separators \x1c-\x1f among them), runs of it at
    # either end, and texts that are not ASCII (NBSP, NEL, ideographic space: counted by split() itself).
    alphabet = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00ab.\x85\xa0\u3000é"
    rng = random.Random(59)
    texts = ["", " ", "a", " a", "a ", "a  b", "\x1fa\x1cb\x1d", "x\u3000y", "\x00 \x00"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    words.cache_clear()
    assert [words(text) for text in texts] == [len(text.split()) for text in texts]


def test_a_scalar_document_is_the_shared_builder_s_in_one_dict(tmp_path: Path) -> None:
    # build_people_docs makes each scalar document in one dict: the same keys, order and values as
    # scalar_pair_doc on the pair's identity, which the other families build with.
    from prb_tasks.documents.pairs import scalar_pair_doc

    compared = 0
    for module, folder in _copies(tmp_path):
        copy = module.SOURCE.read(module.SOURCE.options(data_dir=str(folder)))
        for person in copy.people:
            for choice in person.choices:
                for variant in ("scalar", "scalar_profile"):
                    made = people._scalar_doc("fam", person, choice, variant, "the prompt", "fam::k")
                    shared = scalar_pair_doc(people._identity("fam", person, choice, variant), choice.prompt,
                                             "the prompt", choice.chosen, choice.rejected, "fam::k",
                                             chosen_first=choice.chosen_first)
                    assert list(made.items()) == list(shared.items())
                    compared += 1
    assert compared > 20


def test_the_item_s_spaced_prompt_is_the_prompt_s_words_joined_by_one_space() -> None:
    # Choice.item hashes " ".join(prompt.split()); an ASCII prompt is spaced without a string per word.
    import random

    from prb_tasks.data.people import _spaced

    rng = random.Random(1)
    pieces = [chr(code) for code in range(128) if chr(code).isspace()] + ["a", "bc", "  ", "x y", "é", "\u2003",
                                                                        "\u00a0", "Z"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert _spaced(text) == " ".join(text.split()).encode(), repr(text)
    assert _spaced(" " * 1000 + "a" + "\t" * 777 + "b\x1c") == b"a b"
