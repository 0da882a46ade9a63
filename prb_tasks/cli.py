"""The ``prb`` command.

``prb eval`` is lm-eval's own ``run`` command with the plugin loaded: every argument
is passed through unchanged. The other subcommands are ours.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from prb_tasks import __version__


def _requested_tasks(argv: list[str]) -> list[str]:
    tasks: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--tasks" and i + 1 < len(argv):
            tasks.append(argv[i + 1])
        elif arg.startswith("--tasks="):
            tasks.append(arg.split("=", 1)[1])
    return tasks


def _model_name(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--model" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--model="):
            return arg.split("=", 1)[1]
    return None


def run_eval(argv: list[str]) -> int:
    """Run lm-eval with our models and tasks available.

    Args:
        argv: arguments as ``lm_eval run`` takes them.
    """
    from prb_tasks.plugin import activate

    argv = list(argv)
    # Our judge reads chat messages; without a chat template lm-eval would flatten the
    # system prompt into the user turn, which is not the benchmark's protocol.
    if _model_name(argv) == "prb-judge" and "--apply_chat_template" not in argv:
        argv.append("--apply_chat_template")
    activate(_requested_tasks(argv))

    from lm_eval.__main__ import cli_evaluate

    from prb_tasks.errors import PRBError

    saved = sys.argv
    sys.argv = ["prb eval", "run", *argv]
    try:
        cli_evaluate()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except PRBError as exc:
        print(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, file=sys.stderr)
        return 2
    finally:
        sys.argv = saved
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
            "  prb data validate ./prb_data\n"
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
    val = data_sub.add_parser("validate", help="check a local copy and print row counts per subset")
    val.add_argument("dir", type=Path)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``prb`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "eval":
        return run_eval(args_list[1:])
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command == "tasks-dir":
        from prb_tasks.resources import tasks_dir

        print(tasks_dir())
        return 0
    if args.command == "data":
        from prb_tasks import datatools

        if args.data_command == "download":
            return datatools.download(args.dir, args.subset)
        return datatools.validate(args.dir)
    parser.print_help()
    return 0
