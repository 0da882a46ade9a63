"""The ``prb`` command.

``prb eval`` is lm-eval's own ``run`` command with the plugin loaded: every argument
is passed through unchanged. The other subcommands are ours.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from prb_tasks import __version__


def _flag_values(argv: list[str], *names: str) -> list[str]:
    """Every value given to one of the option ``names`` (``--x v``, ``-x v`` or ``--x=v``)."""
    values: list[str] = []
    for i, arg in enumerate(argv):
        if arg in names and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif "=" in arg and arg.split("=", 1)[0] in names:
            values.append(arg.split("=", 1)[1])
    return values


def _last_flag_value(argv: list[str], *names: str) -> str | None:
    values = _flag_values(argv, *names)
    return values[-1] if values else None


def _write_judge_usage(summary: dict | None, output_path: str | None, started: float) -> Path | None:
    """Save the judge's usage summary next to the results file lm-eval just wrote."""
    if summary is None or not output_path:
        return None
    root = Path(output_path)
    if root.suffix == ".json":
        candidates = list(root.parent.glob(f"{root.stem}_*.json"))
    else:
        candidates = list(root.rglob("results_*.json")) if root.is_dir() else []
    fresh = [p for p in candidates if p.stat().st_mtime >= started - 1 and not p.name.endswith(".usage.json")]
    if not fresh:
        return None
    results = max(fresh, key=lambda p: p.stat().st_mtime)
    if results.name.startswith("results_"):
        target = results.with_name(results.name.replace("results_", "usage_", 1))
    else:
        target = results.with_suffix(".usage.json")
    target.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return target


def _print_legend(requested: list[str]) -> None:
    """Explain the metric names under lm-eval's table, for runs of prb tasks."""
    if os.environ.get("RANK", "0") != "0":
        return  # under accelerate launch only rank 0 prints the table
    from prb_tasks.plugin import plugin_task_names
    from prb_tasks.scoring import bestofn, breakdowns
    from prb_tasks.scoring.metrics import JUDGE_LEGEND, SCALAR_LEGEND
    from prb_tasks.scoring.plans import PLAN_LEGEND, is_plan_task

    names = [t.strip() for spec in requested for t in spec.split(",")]
    ours = [n for n in names if n in plugin_task_names()]
    bon = [n for n in ours if "_bon" in n]
    pairs = [n for n in ours if n not in bon]
    lines: list[str] = []
    if any("scalar" in n for n in pairs):
        lines += SCALAR_LEGEND
    if any(is_plan_task(n) for n in pairs):
        lines += PLAN_LEGEND
    if any("scalar" not in n and not is_plan_task(n) for n in pairs):
        lines += [line for line in JUDGE_LEGEND if line not in lines]
    if bon:
        lines += bestofn.LEGEND
    if any(n.endswith("_judge") for n in bon):
        lines += [line for line in JUDGE_LEGEND if line.startswith("parse_fail") and line not in lines]
    if any(n.startswith(("personalllm", "personalized_custom")) for n in pairs):
        lines += breakdowns.LEGEND[:1]
    if any(n.startswith("personalized_custom") for n in pairs):
        lines += breakdowns.LEGEND[1:]
    if lines:
        print("\n".join(["Metrics:", *(f"  {line}" for line in lines),
                         "  +/-: lm-eval's standard error; for intervals over pairs run `prb compare` on --log_samples output"]))


def run_eval(argv: list[str]) -> int:
    """Run lm-eval with our models and tasks available.

    Args:
        argv: arguments as ``lm_eval run`` takes them.
    """
    from prb_tasks.planner_cli import run_planner, wants_planner
    from prb_tasks.plugin import activate

    argv = list(argv)
    if wants_planner(argv):
        # Two ordinary lm-eval runs (planner, then judge), each through this function.
        return run_planner(argv, run_eval)
    # Our judge reads chat messages; without a chat template lm-eval would flatten the
    # system prompt into the user turn, which is not the benchmark's protocol.
    if _last_flag_value(argv, "--model") == "prb-judge" and "--apply_chat_template" not in argv:
        argv.append("--apply_chat_template")
    activate(_flag_values(argv, "--tasks", "-t"))

    from lm_eval.__main__ import cli_evaluate

    from prb_tasks.errors import PRBError
    from prb_tasks.judge.usage import interrupted_line, stopped_line, take_last_summary
    from prb_tasks.redact import redact
    from prb_tasks.judge.errors import RunStopped

    saved = sys.argv
    sys.argv = ["prb eval", "run", *argv]
    started = time.time()
    try:
        cli_evaluate()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except RunStopped as exc:
        # A dry run or submitted batches: stopped on purpose, before any results.
        print(str(exc), flush=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print(redact(interrupted_line(take_last_summary())), file=sys.stderr, flush=True)
        return 130
    except PRBError as exc:
        print(redact(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__, file=sys.stderr)
        return 2
    except ValueError as exc:
        # lm-eval's own answers to a misspelled task name and to bad JSON in --metadata or
        # --model_args are tracebacks.
        if str(exc).startswith("Invalid JSON"):
            print(f"prb: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 2
        if not str(exc).startswith("Tasks not found"):
            raise
        print(f"prb: {exc}; `prb tasks-dir` holds prb's tasks (personalized_rb, personalized_rb_sample, "
              "personalized_rb_scalar, personalllm, personalized_custom_example, ... see the README's task table)",
              file=sys.stderr)
        return 2
    finally:
        sys.argv = saved
    _print_legend(_flag_values(argv, "--tasks", "-t"))
    summary = take_last_summary()
    written = _write_judge_usage(summary, _last_flag_value(argv, "--output_path", "-o"), started)
    if written is not None:
        print(f"prb-judge usage summary: {written}")
    stopped = stopped_line(summary) if summary is not None else None
    if stopped:
        # Last, so it is not lost above lm-eval's table; exit 3: results are incomplete.
        print(redact(stopped), file=sys.stderr)
        return 3
    return 0


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def run_cache(args: argparse.Namespace) -> int:
    """``prb cache info|clear``: inspect or empty the judge cache (or the RM score cache)."""
    from datetime import datetime

    from prb_tasks.judge.cache import cache_info, clear_cache, default_cache_dir, parse_age
    from prb_tasks.resources import cache_root

    scores = cache_root() / "rm-scores"
    folder = Path(args.cache_dir).expanduser() if args.cache_dir else (
        scores if getattr(args, "scores", False) else default_cache_dir()
    )
    if args.cache_command == "info":
        info = cache_info(folder)
        print(f"judge cache: {info.directory}")
        print(f"  entries: {info.entries}  size: {info.bytes_on_disk / 1e6:.1f} MB")
        if info.oldest is not None and info.newest is not None:
            oldest = datetime.fromtimestamp(info.oldest).strftime("%Y-%m-%d %H:%M")
            newest = datetime.fromtimestamp(info.newest).strftime("%Y-%m-%d %H:%M")
            print(f"  stored between {oldest} and {newest}")
        for model, slot in sorted(info.by_model.items()):
            cost = f"${slot['cost']:.4f}" + (f" (+{slot['unpriced']} unpriced)" if slot["unpriced"] else "")
            print(f"  {model}: {slot['entries']} answers, originally cost {cost}")
        if info.unreadable:
            print(f"  {info.unreadable} entries are not JSON answers and are ignored "
                  "(`prb cache clear` removes them)")
        if not args.cache_dir:
            from prb_tasks.rm.score_cache import ScoreCache

            count = len(ScoreCache(scores)) if (scores / "cache.db").is_file() else 0
            print(f"RM score cache: {scores}")
            print(f"  entries: {count}  size: {_folder_size(scores) / 1e6:.1f} MB"
                  "  (`prb cache clear --scores` empties it)")
        return 0
    try:
        age = parse_age(args.older_than) if args.older_than else None
    except ValueError as exc:
        print(f"prb cache clear: {exc}", file=sys.stderr)
        return 2
    removed = clear_cache(folder, age)
    scope = f" older than {args.older_than}" if args.older_than else ""
    what = "cached scores" if folder == scores else "cached answers"
    print(f"removed {removed} {what}{scope} from {folder}")
    return 0


def run_batch(args: argparse.Namespace) -> int:
    """``prb batch status|cancel``: the provider batches recorded in a judge cache folder."""
    from prb_tasks.judge.batch.commands import batch_cancel, batch_status
    from prb_tasks.judge.cache import default_cache_dir

    folder = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    if args.batch_command == "status":
        return batch_status(folder, args.all)
    return batch_cancel(folder, args.batch_id)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prb",
        description="Personalized RewardBench for lm-evaluation-harness.",
        epilog=(
            "examples:\n"
            "  prb eval --model prb-rm --model_args scorer=bm25 --tasks personalized_rb_sample_scalar\n"
            "  prb eval --model prb-judge --model_args model=openai/gpt-4o-mini --tasks personalized_rb\n"
            "  lm_eval --include_path \"$(prb tasks-dir)\" --model litellm ... --tasks personalized_rb\n"
            "  prb data validate ./prb_data\n"
            "  prb cache info ; prb cache clear --older-than 30d\n"
            "  prb templates official ./official_prompts\n"
            "  prb compare runs/ --out report/\n"
            "  prb batch status ; prb batch cancel BATCH_ID\n"
            "Run `prb eval --help` for every lm-eval option."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"prb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("eval", help="run lm-eval with the plugin loaded (all lm_eval options)")
    sub.add_parser("tasks-dir", help="print the task folder for `lm_eval --include_path`")

    data = sub.add_parser("data", help="local copies of the benchmark data")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    dl = data_sub.add_parser("download", help="download the HF dataset into DIR (HF repo layout)")
    dl.add_argument("dir", type=Path)
    dl.add_argument("--subset", action="append", help="HF config to fetch (repeatable; default all)")
    dl.add_argument("--family", choices=("personalized_rb", "personalllm"), default="personalized_rb",
                    help="which benchmark (default personalized_rb)")
    val = data_sub.add_parser("validate", help="check a local copy (or a preference file) and print counts")
    val.add_argument("dir", type=Path)
    val.add_argument("--family", choices=("personalized_rb", "personalllm", "custom"),
                     help="what DIR holds (default: guessed; a file = custom)")

    tpl = sub.add_parser("templates", help="prompt templates: write the authors' wording for --metadata templates")
    tpl_sub = tpl.add_subparsers(dest="templates_command", metavar="ACTION", required=True)
    official = tpl_sub.add_parser("official", help="download the authors' judge prompts (pinned commit) into DIR")
    official.add_argument("dir", type=Path, help="templates folder to write (DIR/judge/*.jinja)")
    official.add_argument("--source", type=Path, help="read them from a local checkout of the authors' repository")
    official.add_argument("--force", action="store_true", help="replace existing templates that differ")

    cmp_ = sub.add_parser("compare", help="judges and scalar RMs side by side from finished runs: "
                          "statistics, cost, charts, HTML report")
    cmp_.add_argument("paths", nargs="+", type=Path, help="lm-eval output folders or results_*.json files")
    cmp_.add_argument("--out", type=Path, metavar="DIR",
                      help="write report.html, report.md, report.json and PNG charts into DIR")
    cmp_.add_argument("--task", action="append", metavar="NAME",
                      help="only this task family (repeatable; a name also matches its _scalar twin)")
    cmp_.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                      help="what to print: a short table (default), the Markdown report or the JSON report")
    cmp_.add_argument("--no-charts", action="store_true", help="skip the PNG charts")

    cache = sub.add_parser("cache", help="the prb-judge answer cache and the prb-rm score cache")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    for action, text in (("info", "show location, size and contents"), ("clear", "delete cached answers")):
        cmd = cache_sub.add_parser(action, help=text)
        cmd.add_argument("--cache-dir", help="cache folder (default: $PRB_CACHE_DIR/judge or the user cache dir)")
        if action == "clear":
            cmd.add_argument("--older-than", metavar="AGE", help="only answers older than AGE, e.g. 30d, 12h, 2w")
            cmd.add_argument("--scores", action="store_true",
                             help="clear the prb-rm score cache instead of the judge cache")

    batch = sub.add_parser("batch", help="provider batches submitted by prb-judge runs with batch=true")
    batch_sub = batch.add_subparsers(dest="batch_command", metavar="ACTION", required=True)
    status = batch_sub.add_parser("status", help="list recorded batches; refresh the running ones")
    status.add_argument("--all", action="store_true", help="also list every collected batch")
    cancel = batch_sub.add_parser("cancel", help="ask the provider to cancel a running batch")
    cancel.add_argument("batch_id", metavar="ID", help="batch id as `prb batch status` shows it")
    for cmd in (status, cancel):
        cmd.add_argument("--cache-dir", help="judge cache folder (default: $PRB_CACHE_DIR/judge or the user cache dir)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``prb`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "eval":
        try:
            return run_eval(args_list[1:])
        except KeyboardInterrupt:  # while loading, before lm-eval started
            from prb_tasks.judge.usage import interrupted_line

            print(interrupted_line(None), file=sys.stderr)
            return 130
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command == "tasks-dir":
        from prb_tasks.resources import tasks_dir

        print(tasks_dir())
        return 0
    if args.command == "data":
        from prb_tasks import datatools

        if args.data_command == "download":
            return datatools.download(args.dir, args.subset, args.family)
        return datatools.validate(args.dir, args.family)
    if args.command == "cache":
        return run_cache(args)
    if args.command == "batch":
        return run_batch(args)
    if args.command == "templates":
        from prb_tasks.prompts.official_templates import run as write_official

        return write_official(args.dir, args.source, args.force)
    if args.command == "compare":
        from prb_tasks.report.compare import run_command

        return run_command(args)
    parser.print_help()
    return 0
