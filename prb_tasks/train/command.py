"""``prb train DATA --architecture A --backbone B --out DIR``: train a personalization-aware RM.

Also ``python -m prb_tasks.train`` (the same arguments), which is what
``accelerate launch -m prb_tasks.train ...`` runs on every process of a multi-GPU job.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from prb_tasks.common.atomic import fresh_staging, publish, recover, staging
from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install
from prb_tasks.common.terminal import fit, shown_path
from prb_tasks.train.options import PARTS, TrainError, TrainOptions, parse

#: Command-line flags, in TrainOptions' field names.
FLAGS = ("family", "architecture", "backbone", "out", "input_format", "context_parts", "budget", "max_length",
         "support_max", "latent_dim", "variational", "kl_weight", "heads", "user_learning_rate", "adapt_steps",
         "adapt_l2", "epochs", "max_steps", "learning_rate", "batch_size", "seed", "holdout_share", "holdout_seed",
         "bf16", "deepspeed")
_BOOLS = ("variational", "bf16")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``prb train``'s arguments on ``parser`` (the help is each option's description)."""
    fields = TrainOptions.model_fields
    from prb_tasks.data import families

    parser.add_argument("data", metavar="DATA", help=families.accepted_data("train"))
    parser.add_argument("--metadata", metavar="JSON", help=fields["metadata"].description)
    parser.add_argument("--seeds", metavar="N", default=None,
                        help="train N runs that differ only by the seed (--seed, --seed + 1, ...), written to "
                        "OUT/seed-<n>; prb compare folds their evaluations into one row with the spread between "
                        "seeds")
    for name in FLAGS:
        flag = "--" + name.replace("_", "-")
        if name in _BOOLS:
            parser.add_argument(flag, action="store_true", default=None, help=fields[name].description)
        else:
            parser.add_argument(flag, default=None, help=(fields[name].description or "")
                                + ("" if fields[name].is_required() else f" (default {fields[name].default})"))


#: What ``prb train --help`` opens with: the command's shape (the options follow, one by one).
USAGE = "prb train DATA --architecture {plain,context,latent,mixture} --backbone MODEL --out DIR [options]"
#: ... and what it does, before any option.
DESCRIPTION = (
    "Train a personalization-aware reward model on the seen users of DATA with transformers' Trainer "
    "(Bradley-Terry loss) and write a checkpoint folder DIR. Evaluate it on the users it never saw with "
    "prb eval --model prb-method --model_args method=trained,checkpoint=DIR and the family's *_fewshot task "
    "(give it the same --metadata); prb train prints that command when it ends. Needs the train extra. "
    f"Architectures: plain (no user), context (reads the user's {', '.join(PARTS)}), latent (a user vector "
    "from their earlier pairs), mixture (reward heads mixed per user).")


def add_parser(sub: Any) -> None:
    """Register ``prb train`` on the ``prb`` command's subparsers."""
    cmd = sub.add_parser("train", help="train a personalization-aware reward model (plain, context, latent, "
                         "mixture) on a family's seen users; a checkpoint for prb-method and prb-rm",
                         usage=USAGE, description=DESCRIPTION)
    add_arguments(cmd)


def train(options: TrainOptions, progress: bool = True) -> Path:
    """Train the model ``options`` describe and write its checkpoint; returns the folder.

    Args:
        options: validated options.
        progress: print what is happening (stderr).
    """
    from prb_tasks.train.data import resolve_family

    # A wrong data path is said before torch and transformers are imported (44 s on a loaded
    # machine, against 0.4 s for `prb data validate` to say the same).
    resolve_family(options.data, options.family)
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer, set_seed
    except ImportError as exc:
        raise TrainError(f"prb train needs torch and transformers (missing: {exc.name}); install the extra: "
                         f"{pip_install('train')}") from None

    from prb_tasks.common.plain_logs import plain_transformers_logs
    from prb_tasks.data import families
    from prb_tasks.train import checkpoint
    from prb_tasks.train.backbone import check_backbone, load_problem
    from prb_tasks.train.collate import Collator, prepare_tokenizer, render_examples
    from prb_tasks.train.data import load
    from prb_tasks.train.models import CLASSES
    from prb_tasks.train.steplog import LOG_FILE, StepLog
    from prb_tasks.train.text import check_chat_template, parts_for
    from prb_tasks.train.trainer import BradleyTerryTrainer, arguments

    started = time.perf_counter()
    out = Path(options.out).expanduser()
    if recover(out) and progress:
        print(fit(f"prb train: put back {shown_path(out)} (a run killed while replacing it had moved it aside)"),
              file=sys.stderr)
    checkpoint.check_out(out, options.out)
    check_backbone(options.backbone)  # before the data: a wrong backbone should not wait for it
    data = load(options)
    try:
        tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(options.backbone))
    except (OSError, ValueError) as exc:
        raise TrainError(f"prb train: --backbone {options.backbone}: cannot load its tokenizer "
                         f"({load_problem(exc)}); give a model folder or another Hugging Face model id") from None
    if options.input_format == "chat":
        check_chat_template(tokenizer, options.backbone)
    model_options = options.model_options()
    users = {e.user.user_id: e.user for e in data.examples}
    if options.architecture == "context":
        model_options["context_parts"] = parts_for(options.context_parts, list(users.values()),
                                                   families.get(data.family))
        _check_context(model_options["context_parts"], options.support_max)
        if progress and "demographics" in model_options["context_parts"] and data.few_shot is not None:
            from prb_tasks.train.coverage import coverage_line

            if line := coverage_line(data.few_shot):
                print(fit(line), file=sys.stderr)
        if progress and "history" in model_options["context_parts"]:
            _print_fit(data, model_options["context_parts"], options.budget, tokenizer)
    rendered = render_examples(data.examples, options.architecture, model_options, tokenizer)
    set_seed(options.seed)
    plain_transformers_logs()  # its LOAD REPORT (a backbone without its head) in bold codes, in a log file too
    try:
        backbone = AutoModel.from_pretrained(options.backbone)
    except (OSError, ValueError) as exc:
        raise TrainError(f"prb train: --backbone {options.backbone}: cannot load it with AutoModel "
                         f"({load_problem(exc)})") from None
    model = CLASSES[options.architecture](backbone, model_options, len(data.users))
    cpu = not torch.cuda.is_available()
    # Everything is written to a sibling folder and renamed into place when whole: a kill
    # leaves the previous checkpoint as it was (the log too), never a mix of the two.
    staged = _staging(out)
    trainer = BradleyTerryTrainer(model=model, args=arguments(options, str(staged / "trainer"), cpu),
                                  user_learning_rate=options.user_learning_rate,
                                  train_dataset=rendered, data_collator=Collator(tokenizer, options.max_length,
                                                                                 options.input_format == "chat"))
    # Our own progress and a log file in place of transformers' printed dicts (one landed on stdout).
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for printer in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(printer)
    log = staged / LOG_FILE
    trainer.add_callback(StepLog(log, options.architecture, stream=None if progress else io.StringIO(),
                                 command="prb train", shown=Path(shown_path(out / LOG_FILE))))
    if progress:
        print(fit(f"prb train: {options.architecture} on {shown_path(options.backbone)}: {len(rendered)} pairs of "
                  f"{len(data.users)} seen users ({data.family})"), file=sys.stderr)
    result = trainer.train()
    if trainer.is_world_process_zero():
        manifest = {
            "architecture": options.architecture, "backbone": options.backbone, "family": data.family,
            "data": options.data, "metadata": options.metadata, "options": model_options, "users": data.users,
            # What decided the split: the evaluation must be on the same one (prb-method checks).
            "split": data.few_shot.settings if data.few_shot is not None else None,
            # Data without a split: the questions trained on (digests), checked on every path.
            **({"rows": list(data.rows), "heldout_rows": len(data.heldout)} if data.few_shot is None else {}),
            "pairs": len(rendered), "steps": int(result.global_step), "train_loss": float(result.training_loss),
            "seconds": round(time.perf_counter() - started, 1),
        }
        checkpoint.save(staged, trainer.accelerator.unwrap_model(model), tokenizer, manifest)
        if data.few_shot is None:
            from prb_tasks.train.provenance import HELDOUT_ROWS

            (staged / HELDOUT_ROWS).write_text("".join(f"{key}\n" for key in data.heldout), encoding="utf-8")
        if (staged / "trainer").is_dir():
            shutil.rmtree(staged / "trainer")  # the Trainer's scratch (save_strategy "no": nothing kept)
        publish(staged, out, crash="train")
        if progress:
            from prb_tasks.train.data import resolve_family
            from prb_tasks.train.hint import evaluation_command

            family, location = resolve_family(options.data, options.family)
            # Paths under the working folder shown relative to it: the lines (and the hint, a
            # command to paste there) then fit a terminal whatever --out's absolute length.
            how = evaluation_command(shown_path(out), family.name, location, family.data_is_file,
                                     dict(options.metadata), data.few_shot)
            print(fit(f"prb train: wrote {shown_path(out)} ({result.global_step} steps, loss "
                      f"{result.training_loss:.4f}, {time.perf_counter() - started:.1f} s); evaluate it with"),
                  f"  {how}", sep="\n", file=sys.stderr)
    return out


def _staging(out: Path) -> Path:
    """The empty folder this run writes its checkpoint in (one per --out, the same on every process)."""
    # Under accelerate every process computes the same name; only the first clears what a
    # killed run left there, before any of them writes.
    if os.environ.get("RANK", "0") == "0":
        return fresh_staging(out)
    return staging(out)


def _check_context(parts: tuple[str, ...], support_max: int) -> None:
    """One line, before training, when the context model could read nothing about any user.

    A user without one of the parts (no profile, no demographics) is not refused: the part
    is empty for that user, in training and in evaluation alike.

    Args:
        parts: the context parts chosen.
        support_max: most support pairs per training pair (the history part's source).
    """
    if tuple(parts) == ("history",) and support_max == 0:
        raise TrainError("prb train: --context-parts history with --support-max 0 gives the context model no text "
                         "about any user; raise --support-max or add demographics or profile")


def _print_fit(data: Any, parts: tuple[str, ...], budget: int, tokenizer: Any) -> None:
    """Say how many support pairs the context budget holds at each k (stderr)."""
    from prb_tasks.fewshot.split import KS
    from prb_tasks.train.budget import fit_report
    from prb_tasks.train.text import token_measure

    people: dict[str, tuple[Any, list[Any]]] = {}
    for example in data.examples:
        people.setdefault(example.user.user_id, (example.user, []))[1].append(example.pair)
    fitting = fit_report(list(people.values()), parts, budget, token_measure(tokenizer), KS)
    if fitting:
        print(fit(f"prb train: context budget {budget} tokens: support pairs that fit at "
                  f"{', '.join(f'k={k}: {n}' for k, n in fitting.items())} (median user)"), file=sys.stderr)


def _seeds(value: Any) -> int | None:
    """``--seeds`` as a count (None: not given); a wrong value is one line."""
    if value is None:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise TrainError(f"prb train: --seeds {value}: give how many training runs (1 or more), each with its "
                         "own seed")
    return count


def seed_runs(options: TrainOptions, seeds: int) -> list[TrainOptions]:
    """The options of ``--seeds``' runs: seeds ``options.seed`` ... ``+ seeds - 1``, each written to
    ``OUT/seed-<n>``, all holding out the first seed's rows (so every run is scored on the same data).

    Args:
        options: the validated options (``out`` is the folder of the runs).
        seeds: how many runs.
    """
    base = options.seed
    holdout = base if options.holdout_seed is None else options.holdout_seed
    return [options.model_copy(update={"seed": base + n, "out": str(Path(options.out) / f"seed-{base + n}"),
                                       "holdout_seed": holdout}) for n in range(seeds)]


def run(args: argparse.Namespace) -> int:
    """``prb train`` from parsed arguments; 2 on a mistake the user can fix."""
    try:
        options = parse({"data": args.data, **{name: getattr(args, name) for name in FLAGS}}, args.metadata)
        seeds = _seeds(getattr(args, "seeds", None))
        if seeds is None:
            train(options)
        else:
            for run_options in seed_runs(options, seeds):
                train(run_options)
            print(fit(f"prb train: wrote {seeds} checkpoints, {shown_path(Path(options.out).expanduser())}/seed-"
                      f"{options.seed} ... seed-{options.seed + seeds - 1} (each evaluated on the same users "
                      "or rows); evaluate each as its hint says, then prb compare on their output folders "
                      "shows them as one row with the spread between seeds"), file=sys.stderr)
    except PRBError as exc:
        print(str(exc).replace("prb: ", "prb train: ", 1), file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m prb_tasks.train``: the same as ``prb train``."""
    parser = argparse.ArgumentParser(prog="python -m prb_tasks.train", description=DESCRIPTION,
                                     usage=USAGE.replace("prb train", "%(prog)s", 1))
    add_arguments(parser)
    return run(parser.parse_args(argv))
