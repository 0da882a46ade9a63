"""The ``prb`` command.

``prb eval`` is lm-eval's own ``run`` command with the plugin loaded: every argument
is passed through unchanged. The other subcommands are ours.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from prb_tasks import __version__

__all__ = ["main"]


def run_eval(argv: list[str]) -> int:
    """Run lm-eval with our models and tasks available (see :mod:`prb_tasks.cli.evalcmd`).

    Args:
        argv: arguments as ``lm_eval run`` takes them.
    """
    from prb_tasks.cli.evalcmd import run_eval as run

    return run(argv)


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def _entries(folder: Path) -> int:
    """Entries of a diskcache folder, without creating one where there is none."""
    import sqlite3

    db = folder / "cache.db"
    if not db.is_file():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM Cache").fetchone()[0])


def run_cache(args: argparse.Namespace) -> int:
    """``prb cache info|clear``: inspect or empty the judge cache (or the RM score or retrieval cache)."""
    from prb_tasks.common.resources import cache_root
    from prb_tasks.judge.answer_cache import default_cache_dir
    from prb_tasks.prompts.retrieval import retrieval_cache_dir

    scores = cache_root() / "rm-scores"
    if getattr(args, "scores", False) and getattr(args, "retrieval", False):
        print("prb cache clear: give --scores or --retrieval, not both", file=sys.stderr)
        return 2
    if getattr(args, "retrieval", False):
        default = retrieval_cache_dir()
    else:
        default = scores if getattr(args, "scores", False) else default_cache_dir()
    folder = Path(args.cache_dir).expanduser() if args.cache_dir else default
    if folder.exists() and not folder.is_dir():
        print(f"prb cache: {folder} is a file, not a cache folder; check --cache-dir / $PRB_CACHE_DIR",
              file=sys.stderr)
        return 2
    import sqlite3

    from prb_tasks.judge.storage import CacheStoreError, store_error

    try:
        return _run_cache(args, folder, scores)
    except CacheStoreError as exc:
        print(f"prb cache: {exc.problem}; {exc.advice}", file=sys.stderr)
        return 2
    except (OSError, sqlite3.Error) as exc:
        print(store_error(exc, folder, who="prb cache"), file=sys.stderr)
        return 2


def _run_cache(args: argparse.Namespace, folder: Path, scores: Path) -> int:
    from datetime import datetime

    from prb_tasks.judge.answer_cache import cache_info, clear_cache, parse_age
    from prb_tasks.prompts.retrieval import retrieval_cache_dir

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
            cached = slot.get("cached_input_tokens", 0)
            prompt_cache = (f"; {cached:,} of {slot['input_tokens']:,} input tokens were read from the provider's "
                            "prompt cache" if cached else "")
            print(f"  {model}: {slot['entries']} answers, originally cost {cost}{prompt_cache}")
        if info.unreadable:
            print(f"  {info.unreadable} entries are not JSON answers and are ignored "
                  "(`prb cache clear` removes them)")
        if not args.cache_dir:
            print(f"RM score cache: {scores}")
            print(f"  entries: {_entries(scores)}  size: {_folder_size(scores) / 1e6:.1f} MB"
                  "  (`prb cache clear --scores` empties it)")
            retrieval = retrieval_cache_dir()
            print(f"retrieval cache (post rankings, selected posts): {retrieval}")
            print(f"  entries: {_entries(retrieval)}  size: {_folder_size(retrieval) / 1e6:.1f} MB"
                  "  (`prb cache clear --retrieval` empties it; it is rebuilt when needed)")
        return 0
    try:
        age = parse_age(args.older_than) if args.older_than else None
    except ValueError as exc:
        print(f"prb cache clear: {exc}", file=sys.stderr)
        return 2
    removed = clear_cache(folder, age)
    scope = f" older than {args.older_than}" if args.older_than else ""
    what = ("cached rankings and post selections" if getattr(args, "retrieval", False)
            else "cached scores" if folder == scores else "cached answers")
    print(f"removed {removed} {what}{scope} from {folder}")
    return 0


def run_batch(args: argparse.Namespace) -> int:
    """``prb batch status|cancel``: the provider batches recorded in a judge cache folder."""
    from prb_tasks.judge.answer_cache import default_cache_dir
    from prb_tasks.judge.batch.commands import batch_cancel, batch_status

    folder = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    if args.batch_command == "status":
        return batch_status(folder, args.all)
    return batch_cancel(folder, args.batch_id)


class _OneLineParser(argparse.ArgumentParser):
    """prb's parser and, through ``add_subparsers``, every subcommand's.

    A command-line mistake is one line naming the option (and a near miss of a misspelt choice), not argparse's
    usage block before it.
    """

    def error(self, message: str) -> NoReturn:
        import re

        from prb_tasks.common.suggest import did_you_mean

        wrong = re.match(r"argument (\S+): invalid choice: '([^']*)'", message)
        if wrong:
            names = set(wrong.group(1).split("/"))
            action = next((a for a in self._actions if names & {*a.option_strings, str(a.metavar), a.dest}), None)
            if action is not None and action.choices is not None:
                message += did_you_mean(wrong.group(2), [str(c) for c in action.choices])
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    from prb_tasks.data import families

    parser = _OneLineParser(
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
            "  prb templates official ./official_prompts\n"
            "  prb compare runs/ --out report/\n"
            "  prb validity runs/ --out validity/\n"
            "  prb audit sample ; prb audit my_prefs.jsonl\n"
            "  prb personalllm score runs/ --json scores.json\n"
            "  prb bon summary runs/skywork\n"
            "  prb batch status ; prb batch cancel BATCH_ID\n"
            "  prb train prefs.json --architecture context --backbone Qwen/Qwen2.5-0.5B-Instruct --out rm/\n"
            "  prb collect serve pairs.jsonl --out prefs.json --participants ana,ben ; prb collect status prefs.json\n"
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
    dl.add_argument("--family", choices=families.names("download"),
                    default="personalized_rb",
                    help="which benchmark (default personalized_rb)")
    val = data_sub.add_parser("validate", help="check a local copy (or a preference file) and print counts")
    val.add_argument("dir", type=Path,
                     help="the copy's folder (or a preference file), or 'sample' for the bundled sample")
    val.add_argument("--family", choices=families.names("validate"),
                     help="what DIR holds (default: guessed; a file = custom)")

    tpl = sub.add_parser("templates", help="prompt templates: write the authors' wording for --metadata templates")
    tpl_sub = tpl.add_subparsers(dest="templates_command", metavar="ACTION", required=True)
    official = tpl_sub.add_parser("official", help="download the authors' prompts (pinned commit) into DIR: the "
                                  "pairwise judge's and Best-of-N's (policy, grader)")
    official.add_argument("dir", type=Path,
                          help="templates folder to write (DIR/judge/*.jinja, DIR/bon/official_*.jinja)")
    official.add_argument("--source", type=Path, help="read them from a local checkout of the authors' repository")
    official.add_argument("--force", action="store_true", help="replace existing templates that differ")

    cmp_ = sub.add_parser("compare", help="judges and scalar RMs side by side from finished runs: "
                          "statistics, cost, charts, HTML report")
    cmp_.add_argument("paths", nargs="+", type=Path, help="lm-eval output folders or results_*.json files")
    cmp_.add_argument("--out", type=Path, metavar="DIR",
                      help="write report.html, report.md, report.json and PNG charts into DIR")
    cmp_.add_argument("--task", action="append", metavar="NAME",
                      help="only this task family (repeatable; a judge task's name also selects the families "
                           "of its benchmark shown the same input, e.g. its _scalar twin)")
    cmp_.add_argument("--label", action="append", metavar="RUN=NAME", default=[],
                      help="show a run as NAME in every output (repeatable); RUN is its folder, its results "
                           "file or its automatic label")
    cmp_.add_argument("--names", type=Path, metavar="FILE",
                      help="a file of RUN=NAME lines, as --label takes them (# starts a comment)")
    cmp_.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                      help="what to print: a short table (default), the Markdown report or the JSON report")
    cmp_.add_argument("--no-charts", action="store_true", help="skip the PNG charts")

    val_ = sub.add_parser("validity", help="does benchmark accuracy predict Best-of-N gains? correlations across "
                          "models, with intervals over questions and over models")
    val_.add_argument("paths", nargs="+", type=Path, help="lm-eval output folders or results_*.json files of the "
                      "benchmark runs and the Best-of-N runs")
    val_.add_argument("--benchmark", metavar="TASK", action="append",
                      help="the pairwise task (default: the one most models ran); repeat to pool tasks, e.g. "
                      "judges' personalllm with RMs' personalllm_scalar_history")
    val_.add_argument("--downstream", metavar="TASK", action="append",
                      help="the Best-of-N task (default: the one most models ran); repeatable")
    val_.add_argument("--out", type=Path, metavar="DIR",
                      help="write validity.html, validity.md, validity.json and the scatter chart into DIR")
    val_.add_argument("--format", choices=("table", "json"), default="table", help="what to print")
    val_.add_argument("--iters", type=int, default=2000, help="bootstrap draws per interval (default 2000)")
    val_.add_argument("--no-charts", action="store_true", help="skip the scatter chart")
    val_.add_argument("--compare-with", metavar="TASK", action="append",
                      help="another benchmark from the same runs (a task or group, e.g. rewardbench2, by its "
                      "score or acc); repeatable; compares the benchmarks' correlations with the downstream")
    val_.add_argument("--scores", type=Path, metavar="FILE",
                      help="published benchmark scores, CSV (model,<benchmark>,...) or JSON ({model: {benchmark: "
                      "score}}), matched to the contestants by name; compares the benchmarks")

    audit = sub.add_parser("audit", help="how far content-blind shortcuts (longer, shorter, overlap, position) "
                           "get on a data set, with intervals")
    audit.add_argument("data", help=families.accepted_data("audit"))
    audit.add_argument("--family", choices=families.names("audit"),
                       help="what DATA holds (default: guessed, as prb data validate does)")
    audit.add_argument("--metadata", metavar="JSON",
                       help="the family's options as for prb eval, e.g. '{\"n_users\": 200, \"alpha\": 0.05}'")
    audit.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                       help="a table (default), Markdown or JSON")

    cache = sub.add_parser("cache", help="the prb-judge answer cache, the prb-rm score cache, the retrieval cache")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    for action, text in (("info", "show location, size and contents"), ("clear", "delete cached answers")):
        cmd = cache_sub.add_parser(action, help=text)
        cmd.add_argument("--cache-dir", help="cache folder (default: $PRB_CACHE_DIR/judge or the user cache dir)")
        if action == "clear":
            cmd.add_argument("--older-than", metavar="AGE", help="only answers older than AGE, e.g. 30d, 12h, 2w")
            cmd.add_argument("--scores", action="store_true",
                             help="clear the prb-rm score cache instead of the judge cache")
            cmd.add_argument("--retrieval", action="store_true",
                             help="clear the post-retrieval cache (rankings, selected posts) instead")

    pllm = sub.add_parser("personalllm", help="PersonalLLM as its authors measure it: score generated responses")
    pllm_sub = pllm.add_subparsers(dest="personalllm_command", metavar="ACTION", required=True)
    score = pllm_sub.add_parser(
        "score", help="score personalllm_gen generations with the ten reward models: mean reward, win rates",
        description="Score the responses of personalllm_gen runs (lm-eval samples files) with the ten PersonalLLM "
        "reward models through prb-rm (cached per reward model and response), weight them per user, and report "
        "the mean reward and the win rates against the best dataset response and the reference model's response.")
    score.add_argument("paths", nargs="+", type=Path,
                       help="lm-eval output folders or samples_personalllm_gen_*.jsonl files")
    score.add_argument("--rm", action="append", metavar="NAME=ARGS",
                       help="prb-rm model arguments of one reward model, e.g. "
                       "gemma_2b=pretrained=weqweasdas/RM-Gemma-2B or mistral_ray=endpoint=http://host:8000 "
                       "(repeatable; default: pretrained=<the authors' hub id>)")
    score.add_argument("--other-rms", metavar="ARGS",
                       help="model arguments for every reward model no --rm names (e.g. a small stand-in)")
    score.add_argument("--rm-args", metavar="ARGS", help="arguments added to every reward model's, "
                       "e.g. device=cuda,dtype=bfloat16,batch_size=8")
    score.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    score.add_argument("--quiet", action="store_true", help="no progress bars")

    bon = sub.add_parser("bon", help="Personalized RewardBench Best-of-N as its authors report it")
    bon_sub = bon.add_subparsers(dest="bon_command", metavar="ACTION", required=True)
    bon_summary = bon_sub.add_parser(
        "summary", help="per subset and k: questions, mean and std of the picks' grades (preset official runs)",
        description="The authors' Best-of-N table from personalized_rb_bon runs made with --metadata preset "
        "official: per subset and per k in 1, 2, 4, ..., 128, the number of questions and the mean and standard "
        "deviation of the picked candidates' grades.")
    bon_summary.add_argument("paths", nargs="+", type=Path,
                             help="personalized_rb_bon --output_path folders or samples files")
    bon_summary.add_argument("--json", metavar="FILE", help="also write the figures as JSON (their "
                             "evaluation_summary.json shape: subset -> k -> fields)")

    batch = sub.add_parser("batch", help="provider batches submitted by prb-judge runs with batch=true")
    batch_sub = batch.add_subparsers(dest="batch_command", metavar="ACTION", required=True)
    status = batch_sub.add_parser("status", help="list recorded batches; refresh the running ones")
    status.add_argument("--all", action="store_true", help="also list every collected batch")
    cancel = batch_sub.add_parser("cancel", help="ask the provider to cancel a running batch")
    cancel.add_argument("batch_id", metavar="ID", help="batch id as `prb batch status` shows it")
    for cmd in (status, cancel):
        cmd.add_argument("--cache-dir", help="judge cache folder (default: $PRB_CACHE_DIR/judge or the user cache dir)")

    from prb_tasks.collect.command import add_parser as add_collect
    from prb_tasks.train.command import add_parser as add_train

    add_collect(sub)
    from prb_tasks.rl.command import add_parser as add_rl

    add_rl(sub)
    add_train(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``prb`` console script."""
    from prb_tasks.common.private import owner_only_writes

    try:
        with owner_only_writes():  # results, reports and caches may hold people's data
            return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt as exc:
        print(str(exc) or "prb: interrupted (Ctrl-C)", file=sys.stderr)
        return 130


def _main(args_list: list[str]) -> int:
    if args_list and args_list[0] == "eval":
        try:
            return run_eval(args_list[1:])
        except KeyboardInterrupt:  # while loading, before lm-eval started
            from prb_tasks.cli.evalcmd import INTERRUPTED, INTERRUPTED_LINE

            print(INTERRUPTED_LINE, file=sys.stderr)
            return INTERRUPTED
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command == "tasks":
        from prb_tasks.common.taskindex import table

        print(table())
        return 0
    if args.command == "tasks-dir":
        from prb_tasks.common.resources import tasks_dir

        print(tasks_dir())
        return 0
    if args.command == "data":
        from prb_tasks.cli import datatools

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
    if args.command == "validity":
        from prb_tasks.report import validity_benchmarks_output as across

        if across.wanted(args):
            return across.run_command(args)
        from prb_tasks.report.validity_output import run_command as run_validity

        return run_validity(args)
    if args.command == "audit":
        from prb_tasks.audit.command import run_command as run_audit

        return run_audit(args)
    if args.command == "bon":
        from prb_tasks.report.bon_summary import run_command as bon_summary

        return bon_summary(args)
    if args.command == "personalllm":
        from prb_tasks.scoring.personalllm_gen import run as score_generations

        return score_generations(args)
    if args.command == "collect":
        from prb_tasks.collect.command import run as run_collect

        return run_collect(args)
    if args.command == "rl":
        from prb_tasks.cli import evalcmd
        from prb_tasks.rl.command import run as run_rl

        return run_rl(args, evalcmd.run_eval)
    if args.command == "train":
        from prb_tasks.train.command import run as run_train

        return run_train(args)
    parser.print_help()
    return 0
