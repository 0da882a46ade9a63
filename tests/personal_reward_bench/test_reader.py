"""PersonalRewardBench's reader on copies in the hub layout: both halves, the real quirks, one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prb_tasks.data import families
from prb_tasks.data.errors import DataError
from prb_tasks.data.personal_reward_bench.family import validate
from prb_tasks.data.personal_reward_bench.reader import as_people, read_half, shards
from prb_tasks.testing.personal_reward_bench_copy import half_rows, write_copy


def _write(folder: Path, rows_by_split: dict[str, list[dict]]) -> Path:
    data = folder / "chatbot_arena_personalized_0125" / "data"
    data.mkdir(parents=True)
    for split, rows in rows_by_split.items():
        pq.write_table(pa.Table.from_pylist(rows), data / f"{split}-00000-of-00001.parquet")
    return folder


def test_both_halves_read_with_their_quirks(tmp_path: Path) -> None:
    root = write_copy(tmp_path / "copy", users=3)
    for half in ("arena", "prism"):
        copy = read_half(root, half)
        assert [u.user_id for u in copy.users] == sorted(u.user_id for u in copy.users)
        sizes = {u.user_id: (len(u.train), len(u.val), len(u.test)) for u in copy.users}
        assert sizes[f"{half}-user-00"] == (9, 2, 3)
        assert sizes[f"{half}-user-03"] == (1, 0, 1)  # a user with few pairs
        assert sizes[f"{half}-user-04"] == (0, 0, 2)  # test pairs only: no history to show
        # The row of another `split` value is left out and counted, as the authors' loaders do.
        assert sum(copy.skipped.values()) == 1 and "'unused'" in next(iter(copy.skipped))
        rows = [r for u in copy.users for r in (*u.train, *u.val, *u.test)]
        multi = next(r for r in rows if len(r.context) == 3)
        assert multi.request.startswith("Conversation so far:\nUser: Hi, I have a question")
        assert multi.request.endswith("The user's next message:\n" + multi.context[-1].content)
        assert any("日本" in r.request for r in rows) and any("¿" in r.request for r in rows)
        assert all(r.chosen_as_turn for r in rows)
        assert len({r.key for r in rows}) == len(rows)


def test_rows_are_taken_by_their_split_column_across_hub_splits(tmp_path: Path) -> None:
    root = write_copy(tmp_path / "copy", users=2, halves=("arena",))
    hub = half_rows("arena", users=2)
    copy = read_half(root, "arena")
    # Each user's test pairs come from both hub splits: the hub split is not the user split.
    test_ids = {r.conversation_id for u in copy.users for r in u.test}
    in_hub_train = {r["conversation_id"] for r in hub["train"] if r["split"] == "test"}
    assert in_hub_train and in_hub_train <= test_ids
    # Concatenated train shard first, then test (the order `datasets` lists them).
    assert [p.name.split("-")[0] for p in shards(copy.folder)] == ["train", "test"]


def test_lists_of_turns_and_jsonl_shards(tmp_path: Path) -> None:
    root = write_copy(tmp_path / "copy", users=2, halves=("arena",), list_turns=True, fmt="jsonl")
    copy = read_half(root, "arena")
    row = copy.users[0].test[0]
    assert not row.chosen_as_turn and row.chosen_text and row.chosen_text != row.rejected_text
    people = as_people(copy)
    assert people[0].person_id == "arena:arena-user-00"
    assert len(people[0].choices) == 14


@pytest.mark.parametrize(("change", "field"), [
    (lambda r: {**r, "context": [{"role": "user", "content": None}]}, "context.list[TurnRow].0.content"),
    (lambda r: {**r, "chosen": None}, "chosen"),
    (lambda r: {**r, "user_id": ""}, "user_id"),
    (lambda r: {**r, "rejected": {"role": "assistant", "content": None}}, "rejected"),
])
def test_a_bad_row_is_one_line_naming_file_row_and_field(tmp_path: Path, change, field: str) -> None:
    rows = half_rows("arena", users=1)["train"]
    rows[2] = change(rows[2])
    root = _write(tmp_path / "bad", {"train": rows})
    with pytest.raises(DataError) as err:
        read_half(root, "arena")
    message = str(err.value)
    assert "\n" not in message
    assert "train-00000-of-00001.parquet, row 3" in message and f"field '{field}" in message


def test_missing_half_and_missing_shards_are_one_line(tmp_path: Path) -> None:
    root = write_copy(tmp_path / "copy", users=1, halves=("arena",))
    with pytest.raises(DataError, match=r"has no prism_personalized_0125/data/ folder .*hf download "
                                        r"MichaelR207/prism_personalized_0125"):
        read_half(root, "prism")
    (tmp_path / "empty" / "prism_personalized_0125" / "data").mkdir(parents=True)
    with pytest.raises(DataError, match="no <split>-NNNNN-of-NNNNN.parquet file"):
        read_half(tmp_path / "empty", "prism")


def test_registered_once_and_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_copy(tmp_path / "copy", users=2)
    family = families.get("personal_reward_bench")
    assert families.detect(root) == "personal_reward_bench"
    assert "train" in family.commands and family.fewshot
    assert validate(root) == 0
    out = capsys.readouterr().out
    assert "Chatbot Arena half" in out and "PRISM half" in out
    assert "users: 4; pairs: train 19, val 4, test 9" in out
    assert "rows left out: 1 with split 'unused'" in out
    assert max(len(line) for line in out.splitlines() if not line.startswith(str(root))) <= 120


def test_download_fetches_each_half_into_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.cli import datatools

    fetched: list[tuple[str, Path]] = []

    def snapshot(repo: str, patterns: list[str], target: Path, *_again: str) -> int:
        fetched.append((repo, target))
        name = target.name
        half = {"chatbot_arena_personalized_0125": "arena", "prism_personalized_0125": "prism"}[name]
        write_copy(tmp_path / "hub", users=1, halves=(half,))
        import shutil

        shutil.copytree(tmp_path / "hub" / name, target, dirs_exist_ok=True)
        return 0

    monkeypatch.setattr(datatools, "_snapshot", snapshot)
    assert datatools.download(tmp_path / "copy", family="personal_reward_bench") == 0
    copy = tmp_path / "copy"
    assert fetched == [("MichaelR207/chatbot_arena_personalized_0125", copy / "chatbot_arena_personalized_0125"),
                       ("MichaelR207/prism_personalized_0125", copy / "prism_personalized_0125")]


def _hint_argv(message: str) -> list[str]:
    """The command a one-line error tells the user to run, split as a POSIX shell splits it."""
    import shlex

    assert "\n" not in message, message
    commands = re.findall(r"`([^`]+)`", message)
    assert len(commands) == 1, message
    return shlex.split(commands[0])


def test_a_truncated_shard_names_the_command_that_fetches_it_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A shard cut short was named with no way to fetch it again; the line now gives the command, which
    the real CLI parses to this copy and family and which, run after deleting the shard, repairs the copy."""
    import shutil

    from prb_tasks.cli import _parser, datatools, main

    root = write_copy(tmp_path / "my copy", users=2)  # a space: the command must quote the folder
    pristine = write_copy(tmp_path / "hub", users=2)
    shard = root / "prism_personalized_0125" / "data" / "test-00000-of-00001.parquet"
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    with pytest.raises(DataError) as err:
        read_half(root, "prism")
    message = str(err.value)
    assert message.startswith(f"prb: cannot read parquet file {shard}: ") and "delete it and run `" in message
    argv = _hint_argv(message)
    assert argv[0] == "prb"
    args = _parser().parse_args(argv[1:])
    assert (args.command, args.data_command, Path(args.dir), args.family) == ("data", "download", root,
                                                                              "personal_reward_bench")

    def snapshot(repo: str, patterns: list[str], target: Path, *_again: str) -> int:
        # The hub client keeps the files it already fetched and fetches the others.
        for source in (pristine / target.name).rglob("*"):
            dest = target / source.relative_to(pristine / target.name)
            if source.is_file() and not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, dest)
        return 0

    monkeypatch.setattr(datatools, "_snapshot", snapshot)
    shard.unlink()
    assert main(argv[1:]) == 0, capsys.readouterr()

    def pairs(folder: Path) -> list[tuple[str, str, str, str]]:
        users = read_half(folder, "prism").users
        return [(r.key, r.request, r.chosen_text, r.rejected_text) for u in users for r in (*u.train, *u.val, *u.test)]

    assert pairs(root) == pairs(pristine)


def test_a_missing_shard_names_the_command_that_fetches_it(tmp_path: Path) -> None:
    from prb_tasks.cli import _parser

    root = write_copy(tmp_path / "copy", users=1, halves=("arena",))
    data = root / "chatbot_arena_personalized_0125" / "data"
    (data / "train-00000-of-00001.parquet").rename(data / "train-00000-of-00002.parquet")
    with pytest.raises(DataError, match="lacks train-00001-of-00002.parquet") as err:
        read_half(root, "arena")
    args = _parser().parse_args(_hint_argv(str(err.value))[1:])
    assert (Path(args.dir), args.family) == (root, "personal_reward_bench")


def test_no_copy_names_prbs_own_download_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # It told the user to run `hf download` once per half with the right --local-dir; PRISM and Community Alignment
    # name `prb data download DIR --family ...`, which fetches the whole copy into its folders.
    from prb_tasks.data.personal_reward_bench.constants import ENV_VAR
    from prb_tasks.data.personal_reward_bench.sources import resolve_data_dir

    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(DataError) as caught:
        resolve_data_dir(None)
    assert str(caught.value).startswith("prb: the PersonalRewardBench tasks read a local copy: run `prb data "
                                        "download DIR --family personal_reward_bench` (both halves), then pass ")
