"""Where the training numbers of ``prb train`` and ``prb rl`` go: every log dict of the
Trainer to a JSON Lines file beside the model, and on the terminal a progress bar (or, when
stderr is not a terminal, one short line every few steps) instead of transformers' printed dicts.

transformers' Trainer prints each ``logging_steps`` dict (``PrinterCallback``) or writes it
under its tqdm bar (``ProgressCallback``); with TRL's GRPO that is some twenty numbers per
optimizer step, which buried prb rl's own lines, and prb train's final dict landed on stdout.
The numbers stay available: each dict is one line of ``train_log.jsonl`` with its step.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Optional, TextIO

from transformers import TrainerCallback

from prb_tasks.common.terminal import fit

LOG_FILE = "train_log.jsonl"
# The numbers the terminal line shows, when the log has them (TRL's GRPO names).
SHOWN = (("loss", "loss"), ("reward", "reward"), ("reward_std", "reward std"))


def _plain(value: Any) -> Any:
    # JSON has no NaN or infinity; a number that is not finite is written as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class StepLog(TrainerCallback):
    """Writes each log dict to ``path`` and shows the training's progress on ``stream``.

    Args:
        path: the JSON Lines file (appended, so a resumed run continues it, after dropping
            the records past the step it resumes from; one object per log call, with ``step``).
        label: what the progress names (the reward model, the architecture).
        every: a terminal line every this many steps when ``stream`` is not a terminal
            (None: about ten lines over the run).
        stream: where progress goes (default stderr); a terminal gets a tqdm bar.
        command: the command that trains, at the start of each line (``prb rl``).
        shown: the path the last line names (default ``path``): where the file will be once
            the folder it is written in is renamed into place.
    """

    def __init__(self, path: Path, label: str, every: Optional[int] = None, stream: Optional[TextIO] = None,
                 command: str = "prb rl", shown: Optional[Path] = None):
        self.path = path
        self.shown_path = shown if shown is not None else path
        self.label = label
        self.command = command
        self.every = every
        self.stream = stream if stream is not None else sys.stderr
        self.bar: Any = None
        self.last: dict[str, Any] = {}
        self.shown = 0

    def _interactive(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def on_train_begin(self, args, state, control, **kwargs):
        """Open the bar (a terminal) or fix how often a line is printed."""
        if not state.is_world_process_zero:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._keep_until(state.global_step)
        if self._interactive():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=state.max_steps, initial=state.global_step, desc=f"{self.command}: {self.label}",
                            unit="step", file=self.stream, dynamic_ncols=True)
        elif self.every is None:
            self.every = max(1, state.max_steps // 10)
        self.shown = state.global_step

    def _keep_until(self, step: int) -> None:
        """Drop the records a resumed run will write again: those after ``step`` (where it resumes)
        and the summary of an earlier end, so the file holds each step once."""
        if not self.path.is_file():
            return
        kept = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            if isinstance(record, dict) and isinstance(record.get("step"), int) and record["step"] <= step \
                    and "train_runtime" not in record:
                kept.append(line + "\n")
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(kept), encoding="utf-8")
        tmp.replace(self.path)

    def on_log(self, args, state, control, logs=None, **kwargs):
        """Append the dict to the file; keep it for the next terminal line."""
        if not state.is_world_process_zero or not logs:
            return
        record = {"step": state.global_step, **{k: _plain(v) for k, v in logs.items()}}
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        self.last = record
        if "train_runtime" in logs:
            self._line(state, last=True)
        elif self.bar is not None:
            self.bar.set_postfix({name: f"{logs[key]:.4g}" for key, name in SHOWN[:2]
                                  if isinstance(logs.get(key), (int, float))}, refresh=False)
        elif state.global_step - self.shown >= (self.every or 1) or state.global_step == state.max_steps:
            self._line(state)

    def on_step_end(self, args, state, control, **kwargs):
        """Move the bar."""
        if self.bar is not None and state.is_world_process_zero:
            self.bar.update(state.global_step - self.bar.n)

    def on_train_end(self, args, state, control, **kwargs):
        """Close the bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _line(self, state: Any, last: bool = False) -> None:
        if self.bar is not None and not last:
            return
        if last:
            seconds = self.last.get("train_runtime")
            took = f" in {seconds:.0f} s" if isinstance(seconds, (int, float)) else ""
            text = (f"{self.command}: {self.label}: trained to step {state.global_step}{took}; "
                    f"every step's numbers in {self.shown_path}")
        else:
            numbers = "  ".join(f"{name} {self.last[key]:.4g}" for key, name in SHOWN
                                if isinstance(self.last.get(key), (int, float)))
            text = f"{self.command}: {self.label}: step {state.global_step}/{state.max_steps}  {numbers}".rstrip()
            self.shown = state.global_step
        text = fit(text)  # the file's path can be long
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)
