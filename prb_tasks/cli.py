"""The ``prb`` command.

``prb eval`` is lm-eval's own ``run`` command with the plugin loaded: every argument
is passed through unchanged. The other subcommands are ours.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from prb_tasks import __version__


def _write_judge_usage(output_path: str | None, started: float) -> Path | None:
    """Save the judge's usage summary next to the results file lm-eval just wrote."""
    from prb_tasks.judge.usage import take_last_summary

    summary = take_last_summary()
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


def run_eval(argv: list[str]) -> int:
    """Run lm-eval with our models and tasks available (see :mod:`prb_tasks.evalcmd`).

    Args:
        argv: arguments as ``lm_eval run`` takes them.
    """
    from prb_tasks.evalcmd import run_eval as run

    return run(argv)


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def run_cache(args: argparse.Namespace) -> int:
    """``prb cache info|clear``: inspect or empty the judge cache (or the RM score cache)."""
    from prb_tasks.judge.cache import default_cache_dir
    from prb_tasks.resources import cache_root

    scores = cache_root() / "rm-scores"
    folder = Path(args.cache_dir).expanduser() if args.cache_dir else (
        scores if getattr(args, "scores", False) else default_cache_dir()
    )
    if folder.exists() and not folder.is_dir():
        print(f"prb cache: {folder} is a file, not a cache folder; check --cache-dir / $PRB_CACHE_DIR",
              file=sys.stderr)
        return 2
    import sqlite3

    try:
        return _run_cache(args, folder, scores)
    except (OSError, sqlite3.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        print(f"prb cache: cannot use the cache in {folder}: {reason}; check its permissions, or "
              "delete the folder if it is damaged", file=sys.stderr)
        return 2


def _run_cache(args: argparse.Namespace, folder: Path, scores: Path) -> int:
    from datetime import datetime

    from prb_tasks.judge.cache import cache_info, clear_cache, parse_age

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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prb",
        description="Personalized RewardBench for lm-evaluation-harness.",
        epilog=(
            "examples:\n"
            "  prb eval --model prb-rm --model_args scorer=bm25 --tasks personalized_rb_sample_scalar\n"
            "  prb eval --model prb-judge --model_args model=openai/gpt-4o-mini --tasks personalized_rb\n"
            "  lm_eval --include_path \"$(prb tasks-dir)\" --model litellm ... --tasks personalized_rb\n"
            "  prb tasks\n"
            "  prb data validate ./prb_data\n"
            "  prb cache info ; prb cache clear --older-than 30d\n"
            "  prb compare runs/\n"
            "Run `prb eval --help` for every lm-eval option."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"prb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("eval", help="run lm-eval with the plugin loaded (all lm_eval options)")
    sub.add_parser("tasks", help="list prb's tasks: description, backends, data")
    sub.add_parser("tasks-dir", help="print the task folder for `lm_eval --include_path`")

    data = sub.add_parser("data", help="local copies of the benchmark data")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    dl = data_sub.add_parser("download", help="download the HF dataset into DIR (HF repo layout)")
    dl.add_argument("dir", type=Path)
    dl.add_argument("--subset", action="append", help="HF config to fetch (repeatable; default all)")
    val = data_sub.add_parser("validate", help="check a local copy and print row counts per subset")
    val.add_argument("dir", type=Path, help="the copy's folder, or 'sample' for the bundled sample")

    cmp_ = sub.add_parser("compare", help="judges and scalar RMs side by side from finished runs")
    cmp_.add_argument("paths", nargs="+", type=Path, help="output folders or results_*.json files")
    cmp_.add_argument("--format", choices=("markdown", "json"), default="markdown")

    cache = sub.add_parser("cache", help="the prb-judge answer cache and the prb-rm score cache")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    for action, text in (("info", "show location, size and contents"), ("clear", "delete cached answers")):
        cmd = cache_sub.add_parser(action, help=text)
        cmd.add_argument("--cache-dir", help="cache folder (default: $PRB_CACHE_DIR/judge or the user cache dir)")
        if action == "clear":
            cmd.add_argument("--older-than", metavar="AGE", help="only answers older than AGE, e.g. 30d, 12h, 2w")
            cmd.add_argument("--scores", action="store_true",
                             help="clear the prb-rm score cache instead of the judge cache")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``prb`` console script."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt as exc:
        print(str(exc) or "prb: interrupted (Ctrl-C)", file=sys.stderr)
        return 130


def _main(args_list: list[str]) -> int:
    if args_list and args_list[0] == "eval":
        return run_eval(args_list[1:])
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command == "tasks":
        from prb_tasks.taskindex import table

        print(table())
        return 0
    if args.command == "tasks-dir":
        from prb_tasks.resources import tasks_dir

        print(tasks_dir())
        return 0
    if args.command == "data":
        from prb_tasks import datatools

        if args.data_command == "download":
            return datatools.download(args.dir, args.subset)
        return datatools.validate(args.dir)
    if args.command == "cache":
        return run_cache(args)
    if args.command == "compare":
        from prb_tasks.errors import PRBError
        from prb_tasks.report.compare import compare

        try:
            print(compare(args.paths, args.format))
        except PRBError as exc:
            print(str(exc), file=sys.stderr)
            return 2
        return 0
    parser.print_help()
    return 0
