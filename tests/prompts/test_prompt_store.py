"""The prompt store keeps a way to render a judge prompt again instead of its text (issue 24)."""

from __future__ import annotations

import pytest

from prb_tasks.documents.pairs import to_dataset
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.prompts import prompt_store


@pytest.mark.parametrize("variant", ["profile", "official", "both"])
def test_stashed_judge_prompts_render_back_identically(variant: str) -> None:
    plain = build_docs("Art_and_Entertainment", variant, data_dir="sample")
    stashed = to_dataset(build_docs("Art_and_Entertainment", variant, data_dir="sample"))["test"]
    assert len(plain) == len(stashed) > 0
    for before, after in zip(plain, stashed):
        assert "prompt" not in after
        # The store holds the recipe, not the text, and renders exactly the same text.
        assert not isinstance(prompt_store._PROMPTS[after["prompt_key"]], str)
        assert prompt_store.doc_prompt(after) == before["prompt"]
        assert {k: v for k, v in after.items() if k != "prompt_key"} == \
            {k: v for k, v in before.items() if k != "prompt"}


def test_a_recipe_that_renders_differently_is_refused() -> None:
    texts = iter(["first text", "second text"])
    prompt_store.rebuildable("first text", lambda: next(texts))
    next(texts)  # the recipe now gives something else
    (doc,) = prompt_store.stash([{"pair_key": "x/0", "prompt": "first text"}])
    with pytest.raises(RuntimeError, match="x/0"):
        prompt_store.doc_prompt(doc)


def test_plain_prompts_are_kept_as_text() -> None:
    (doc,) = prompt_store.stash([{"pair_key": "y/0", "prompt": "a prompt with no recipe"}])
    assert prompt_store._PROMPTS[doc["prompt_key"]] == "a prompt with no recipe"
    assert prompt_store.doc_prompt(doc) == "a prompt with no recipe"


def test_the_key_of_a_just_served_prompt_is_known_without_hashing_it_again(monkeypatch) -> None:
    text = "A profile prompt. " * 500
    prompt_store.rebuildable(text, lambda: "A profile prompt. " * 500)
    (doc,) = prompt_store.stash([{"pair_key": "z/0", "prompt": text}])
    hashed: list[int] = []
    real_key = prompt_store._key
    monkeypatch.setattr(prompt_store, "_key", lambda t: hashed.append(len(t)) or real_key(t))
    served = prompt_store.doc_prompt(doc)  # rendered again from the recipe: a new string
    assert served == text and served is not text
    assert prompt_store.kept_key(served) == doc["prompt_key"] and hashed == []
    # An equal text that was not served (another object) is found by its hash.
    assert prompt_store.kept_key("".join([served[:10], served[10:]])) == doc["prompt_key"] and hashed == [len(text)]
    assert prompt_store.kept_key("never stored") is None


def test_prompts_can_be_served_from_several_threads_at_once() -> None:
    import threading

    keys = []
    for n in range(300):
        text = f"Prompt number {n}. " * 50
        prompt_store.rebuildable(text, lambda text=text: "".join(text))
        keys.append(prompt_store.stash([{"prompt": text}])[0]["prompt_key"])
    failures: list[BaseException] = []

    def serve(offset: int) -> None:
        try:
            for round_ in range(20):
                for key in keys[offset:] + keys[:offset]:
                    text = prompt_store.prompt_text(key)
                    assert prompt_store.kept_key(text) == key
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)

    threads = [threading.Thread(target=serve, args=(offset,)) for offset in (0, 75, 150, 225)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and len(prompt_store._SERVED) <= prompt_store._SERVED_MAX
