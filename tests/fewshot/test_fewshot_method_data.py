"""A method that cannot run on the data is refused before the data is embedded (issue 50.6):
``method=oracle`` on your own file with ``features=embedding`` spent 80 s embedding first."""

from __future__ import annotations

import pytest

from prb_tasks.data.custom.sources import example_path
from prb_tasks.data.errors import DataError
from prb_tasks.documents.fewshot import build_docs


def test_oracle_on_your_own_file_is_one_line_before_embedding(monkeypatch):
    import prb_tasks.fewshot.features as features

    def embedded(*args, **kwargs):
        raise AssertionError("the responses were embedded before the method was checked")

    monkeypatch.setattr(features, "with_embeddings", embedded)
    with pytest.raises(DataError, match=r"^prb: method 'oracle' runs on personalllm data only, not on custom data; "
                                        r"run it on personalllm_fewshot$"):
        build_docs("custom", "method", data_path=str(example_path()), features="embedding", method="oracle")


def test_other_methods_and_judges_are_not_checked_here():
    # nonpersonalized runs anywhere; a judge variant has no method; an unknown name is prb-method's to report.
    for extra in ({"method": "nonpersonalized"}, {"method": "no_such_method"}, {}):
        assert build_docs("custom", "method", data_path=str(example_path()), queries=1, **extra)
