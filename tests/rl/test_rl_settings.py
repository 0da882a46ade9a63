"""``prb rl --out DIR`` never reuses an artefact made with other settings (issue 50.5): each
artefact's settings are recorded beside it, a re-run with another --policy, --seed or preset
setting is refused in one line before any work, and a folder prb rl did not make is refused.

The first run is real ``prb rl`` up to the point where it samples or trains; sampling and
training are replaced by stand-ins that write what the real steps write and then stop the run
as Ctrl-C does (training itself is covered by test_rl.py and test_rl_resume.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.cli import main

pytest.importorskip("trl")


def _argv(tmp_path: Path, policy: str = "policyA", *extra: str) -> list[str]:
    (tmp_path / policy).mkdir(exist_ok=True)
    return ["rl", "--policy", str(tmp_path / policy), "--rm", "scorer=length", "--grader", "model=openai/g",
            "--out", str(tmp_path / "out"), "--data-dir", "sample", *extra]


@pytest.fixture
def stand_ins(monkeypatch):
    """Sampling writes its answers file (reused when whole) and training writes a checkpoint, then
    Ctrl-C; returns the calls."""
    from prb_tasks.rl import generate, train

    calls: list[str] = []

    def sample(policy, prompts, preset, seed, path):
        done = generate.read_answers(path)
        if all(p.pair_key in done for p in prompts):  # reused, as the real step reuses a whole file
            return done
        calls.append(f"sample {Path(path).name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps({"pair_key": p.pair_key, "answer": "a"}) + "\n" for p in prompts),
                        encoding="utf-8")
        return {p.pair_key: "a" for p in prompts}

    def training(policy, prompts, reward, preset, folder, seed, label="policy"):
        calls.append("train")
        (folder / "checkpoint-2").mkdir(parents=True, exist_ok=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(generate, "generate_answers", sample)
    monkeypatch.setattr(train, "train_policy", training)
    return calls


def _line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("prb rl: preset ")]
    assert len(err) == 1, err
    return err[0]


def test_another_policy_or_seed_is_refused_before_any_work(tmp_path, capsys, stand_ins):
    assert main(_argv(tmp_path)) == 130  # base answers sampled, training stopped at its first checkpoint
    assert stand_ins == ["sample base.jsonl", "train"]
    out = tmp_path / "out"
    capsys.readouterr()
    stand_ins.clear()

    assert main(_argv(tmp_path, "policyB", "--seed", "3")) == 2
    line = _line(capsys)
    assert line == (f"prb rl: {out / 'answers' / 'base.jsonl'} was made with other settings: --policy "
                    f"{tmp_path / 'policyA'} (now {tmp_path / 'policyB'}); --seed 0 (now 3); give a new --out, or "
                    f"delete {out / 'answers' / 'base.jsonl'} to make it again with these")
    assert stand_ins == []  # nothing sampled or trained under the new label
    recorded = json.loads((out / "answers" / "base.settings.json").read_text(encoding="utf-8"))
    assert recorded["--policy"] == str(tmp_path / "policyA") and recorded["--seed"] == 0
    # The same command resumes (the answers are reused, training goes on).
    assert main(_argv(tmp_path)) == 130
    assert stand_ins == ["train"]


def test_other_training_settings_are_refused_for_the_trained_policy(tmp_path, capsys, stand_ins):
    assert main(_argv(tmp_path, "policyA", "--max-steps", "4")) == 130
    capsys.readouterr()
    (tmp_path / "out" / "answers" / "base.jsonl").unlink()  # only the policy is left to compare
    assert main(_argv(tmp_path, "policyA", "--max-steps", "8")) == 2
    line = _line(capsys)
    policies = tmp_path / "out" / "policies"
    folder = next(policies.iterdir())
    assert line.startswith(f"prb rl: {folder} was made with other settings: the preset's training settings "
                           "(--preset, --max-steps); give a new --out"), line
    assert stand_ins == ["sample base.jsonl", "train"]


def test_held_out_questions_are_part_of_the_answers_settings(tmp_path, capsys, stand_ins):
    assert main(_argv(tmp_path, "policyA", "--test-limit", "3")) == 130
    capsys.readouterr()
    assert main(_argv(tmp_path, "policyA", "--test-limit", "4")) == 2
    assert "the held-out questions (--data-dir, --templates, --preset, --test-limit)" in _line(capsys)


def test_a_folder_prb_rl_did_not_make_is_refused(tmp_path, capsys, stand_ins):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(_argv(tmp_path)) == 2
    assert _line(capsys) == (f"prb rl: --out '{out}' is a folder with other files in it (no prb-rl.json: not a prb "
                             "rl folder, or one an older prb made); give a new or empty folder")
    assert stand_ins == [] and sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_an_artefact_without_its_settings_file_is_refused(tmp_path, capsys, stand_ins):
    assert main(_argv(tmp_path)) == 130
    capsys.readouterr()
    (tmp_path / "out" / "answers" / "base.settings.json").unlink()
    assert main(_argv(tmp_path)) == 2
    assert "base.jsonl has no readable settings file (base.settings.json: an older prb made it" in _line(capsys)
