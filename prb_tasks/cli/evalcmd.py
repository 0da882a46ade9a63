"""``prb eval``: lm-eval's ``run`` command with prb's models and tasks loaded.

The command line is read by lm-eval's own parser (:mod:`prb_tasks.common.harness_args`),
``--config`` YAML files included, and handed to lm-eval's ``run`` command
unchanged. Around it, this module adds what a user of prb needs: mistakes caught
before anything runs (unknown model or task with a near match, an output folder
that cannot be written), one line instead of a traceback for anything the user can
fix (Ctrl-C included), and after the tables the data each task read and a legend
of the metrics shown. The results file gets a ``prb`` section (see
:func:`_prb_section`).
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prb_tasks import __version__
from prb_tasks.common.errors import PRBError
from prb_tasks.common.harness_args import HarnessArgs, HarnessArgsError, declare, parse, run_parser
from prb_tasks.common.suggest import did_you_mean

#: Exit status for a run stopped with Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130
#: What Ctrl-C prints when no backend said what it saved.
INTERRUPTED_LINE = ("prb: interrupted (Ctrl-C) before results were written; re-running the same command "
                    "starts again, reusing cached answers and scores")
#: Exit status for a run that stopped sending early (dead server, exhausted quota):
#: results were written but are incomplete.
STOPPED_EARLY = 3


def help_text() -> str:
    """The prb section printed before lm-eval's own ``--help``."""
    from prb_tasks.documents.metadata import all_specs, describe_keys

    lines = [
        "prb eval: lm-eval's `run` command with prb's models and tasks loaded; every lm-eval",
        "option listed further down works unchanged (--config YAML files too).",
        "",
        "prb's models (--model):",
        "  prb-judge  an LLM judge through litellm. Key model_args: model=openai/gpt-4o-mini |",
        "             config=claude-sonnet (bundled configs), api_base=URL, num_concurrent=16,",
        "             max_cost=DOLLARS, cache=on|off|read|write|refresh, reask=true",
        "  prb-rm     scalar reward models and baselines. Key model_args: pretrained=HUB_ID|DIR |",
        "             endpoint=URL,served_model=NAME | scorer=bm25|length|embedding, batch_size=16,",
        "             device=auto, cache=on|off",
        "  prb-method a personalization method on the *_fewshot tasks: method=lowrank|similar_users|",
        "             nonpersonalized|oracle|ENTRY_POINT|module:Class, then the method's own options",
        "prb's tasks (--tasks): `prb tasks` lists them with a description and their backends",
        "  (personalized_rb, personalized_rb_scalar, personalized_rb_sample_scalar, ...).",
    ]
    from prb_tasks.common.taskindex import groups

    # Named by the groups each family's folder holds: folder names are not task prefixes
    # (the few-shot tasks are personalllm_fewshot, personalized_custom_fewshot, ...).
    by_family: dict[str, list[str]] = {}
    for group in groups():
        by_family.setdefault(group.family, []).append(group.name)
    for spec in all_specs():
        names = sorted(by_family.get(spec.family, []), key=len)
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        lines.append(f"Options of the {spec.family} tasks ({shown}) (--metadata '{{\"key\": value}}'):")
        lines.extend(f"  {line}" for line in describe_keys(spec))
    lines += [
        f"Output: one compact table of the headline metrics; {'--full_tables'} prints lm-eval's full tables",
        "  (every metric of every task and group) instead.",
        "Examples:",
        "  prb eval --model prb-rm --model_args scorer=bm25 --tasks personalized_rb_sample_scalar",
        "  prb eval --model prb-judge --model_args model=openai/gpt-4o-mini --tasks personalized_rb \\",
        "           --output_path runs --log_samples",
        "docs/judges.md and docs/reward-models.md list every model_arg.",
        "",
        "lm-eval's options:",
    ]
    return "\n".join(lines)


def as_typed(line: str, plain: bool) -> str:
    """``line`` as the user's command names itself: a run typed as plain ``lm_eval`` (routed here by
    :mod:`prb_tasks.cli.lm_eval_hook`) did not type ``prb eval``, so its lines start ``prb:``.

    Args:
        line: a line that may start with ``prb eval:``.
        plain: the run was typed as plain ``lm_eval``.
    """
    return "prb:" + line[len("prb eval:"):] if plain and line.startswith("prb eval:") else line


def _print_error(exc: BaseException, plain: bool = False) -> None:
    from prb_tasks.common.redact import redact

    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    # An error may quote a provider's reply, which may echo a key.
    print(redact(as_typed(line, plain)), file=sys.stderr)


def _unwritable(folder: Path) -> str | None:
    """Why new files cannot be written in ``folder`` (or where it would be created), or None.

    Nothing is created: a probe file is written to, and removed from, the folder or
    its nearest existing parent, so a run refused later leaves no empty folder.
    """
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None:
        return "no such folder"
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:
        os.listdir(existing)
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".prb-write-check-"):
            pass
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def check_output_path(value: str | None) -> None:
    """Fail now, not after the run, if results cannot be written to ``value``.

    lm-eval only logs a warning when it cannot save, so a long run would end with
    nothing on disk.
    """
    if not value:
        return
    path = Path(value).expanduser()
    reason = _unwritable(path.parent if path.suffix == ".json" else path)
    if reason:
        raise HarnessArgsError(f"prb eval: cannot write results to --output_path {value}: {reason}; "
                               "choose a folder you can write to")


def check_cache_path(value: str | None) -> None:
    """lm-eval's ``--use_cache`` prefix must sit in a folder that can be written."""
    if not value:
        return
    reason = _unwritable(Path(value).expanduser().parent)
    if reason:
        raise HarnessArgsError(f"prb eval: cannot write lm-eval's cache --use_cache {value}: {reason}; "
                               "choose a folder you can write to")


def check_tasks(tasks: list[str], own_folders: bool = False) -> None:
    """Tasks must be given; task YAML paths must exist; a misspelt prb task is caught now.

    Args:
        tasks: the requested names and YAML paths.
        own_folders: the run adds task folders (``--include_path``), which may define
            names that look like ours, so only lm-eval can tell whether they exist.
    """
    if not tasks:
        raise HarnessArgsError("prb eval: no tasks given; pass --tasks NAME (`prb tasks` lists prb's tasks)")
    for task in tasks:
        if task.endswith((".yaml", ".yml")) and not glob.glob(os.path.expanduser(task)):
            raise HarnessArgsError(f"prb eval: --tasks {task}: no such file")
    if not own_folders:
        # lm-eval reports an unknown name only after indexing its ~14,700 tasks (~15 s on a
        # small machine); a name in our namespace or close to one of ours is answered at once.
        mistyped = [t for t in tasks if _looks_like_ours(t)]
        if mistyped:
            raise HarnessArgsError(_missing_tasks("Tasks not found: " + ", ".join(mistyped)))


def _looks_like_ours(name: str) -> bool:
    """True for a name that is not a prb task but is in our namespace or near one of ours."""
    from prb_tasks.common.resources import tasks_dir
    from prb_tasks.common.suggest import close_matches
    from prb_tasks.plugin import plugin_task_names

    ours = plugin_task_names()
    if name in ours or name.endswith((".yaml", ".yml")) or any(c in name for c in "*?["):
        return False
    families = [p.name for p in tasks_dir().iterdir() if p.is_dir()]
    return name.startswith(tuple(families)) or bool(close_matches(name, ours))


def check_key_arguments(args: HarnessArgs) -> None:
    """A key in prb's ``--model_args`` is refused here, before lm-eval logs the arguments."""
    from prb_tasks.common.keyargs import KEY_SOURCE, refuse_key_arguments

    instead = KEY_SOURCE.get(args.model)
    if instead is not None:
        refuse_key_arguments(args.model_args, f"{args.model}: model_args", instead, HarnessArgsError)


def check_model_arguments(args: HarnessArgs) -> None:
    """Refuse model arguments prb can tell are wrong before lm-eval logs them (values included):
    a URL with a user name or password (any model), and keys prb's own models do not take."""
    from prb_tasks.common.keyargs import KEY_SOURCE, refuse_url_credentials
    from prb_tasks.common.redact import register_url_secrets

    given = args.model_args
    for value in given.values():  # ?key=... in a URL: hidden from the first line printed on
        register_url_secrets(value)
    instead = KEY_SOURCE.get(args.model, "use the environment variable the model reads it from")
    refuse_url_credentials(given, "prb eval: --model_args", instead, HarnessArgsError)
    if args.model == "prb-judge":
        from pydantic import ValidationError

        from prb_tasks.judge.errors import JudgeConfigError
        from prb_tasks.judge.options import ModelArgs, describe_error

        unknown = {k: v for k, v in given.items() if k not in ModelArgs.model_fields}
        if unknown:
            try:
                ModelArgs(**unknown)
            except ValidationError as exc:
                raise JudgeConfigError(describe_error(exc, "model_args", set(ModelArgs.model_fields))) from None
    elif args.model == "prb-rm":
        from prb_tasks.common.suggest import did_you_mean
        from prb_tasks.rm.errors import RMError
        from prb_tasks.rm.options import HARNESS_KEYS, accepted_keys

        unknown_keys = [k for k in given if k not in accepted_keys() and k not in HARNESS_KEYS]
        if unknown_keys:
            first = unknown_keys[0]
            raise RMError(f"prb-rm: unknown model_args key '{first}'{did_you_mean(first, accepted_keys())}; "
                          "accepted: " + ", ".join(accepted_keys()))


def check_judge_key(args: HarnessArgs) -> None:
    """A judge whose key is plainly missing stops here, within a second of start-up, before
    lm-eval is imported or any data loaded (the judge checks again when it is made)."""
    if args.model == "prb-rm":
        _check_served_rm_token(args.model_args)
    if args.model != "prb-judge":
        return
    from prb_tasks.judge.configs import resolve_settings
    from prb_tasks.judge.keys import missing_key_line

    # A bad argument (an unset api_key_env among them) is a one-line JudgeConfigError: now.
    line = missing_key_line(resolve_settings(args.model_args))
    if line is not None:
        raise HarnessArgsError(line)


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (tenacity's RetryError: its last attempt's)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        last = getattr(current, "last_attempt", None)  # tenacity.RetryError
        if last is not None and hasattr(last, "exception"):
            try:
                todo.append(last.exception())
            except Exception:  # noqa: BLE001 - a cancelled attempt has none
                pass
        todo += [current.__cause__, current.__context__]
    return seen


def unreachable_line(args: HarnessArgs | None, exc: BaseException) -> str | None:
    """One line for lm-eval's API backends (``local-chat-completions``, ``local-completions``...)
    failing to connect to their server, instead of lm-eval's traceback; None for anything else.

    Args:
        args: the parsed command line (None when it failed before parsing).
        exc: what stopped the run.
    """
    if args is None or args.model.startswith("prb-"):
        return None  # prb's own backends say it themselves
    causes = _causes(exc)
    names = {type(c).__name__ for c in causes}
    refused = [c for c in causes if isinstance(c, ConnectionError) or type(c).__name__ in (
        "ClientConnectorError", "NewConnectionError", "ConnectTimeout", "ServerDisconnectedError")]
    if not refused and not ({"ConnectionError", "MaxRetryError"} & names):
        return None
    deepest = next((c for c in reversed(causes) if isinstance(c, OSError) and (c.errno or c.strerror)), None)
    if deepest is not None:
        reason = os.strerror(deepest.errno) if deepest.errno else str(deepest.strerror)
    else:
        reason = type(refused[0] if refused else exc).__name__
    url = str(args.model_args.get("base_url") or args.model_args.get("api_base") or "its base_url")
    return (f"prb eval: {args.model} could not connect to {url} ({reason}); check that the server is running "
            "and that base_url names it (e.g. base_url=http://127.0.0.1:8080/v1/chat/completions)")


def _check_served_rm_token(model_args: dict[str, Any]) -> None:
    """A served RM whose server wants a token that is not set: one line before lm-eval starts."""
    from prb_tasks.rm.scorers.served import API_KEY_ENV, token_refusal

    endpoint = model_args.get("endpoint")
    if not endpoint or os.environ.get(API_KEY_ENV):
        return
    path = model_args.get("api_path") or ("/pooling" if model_args.get("api") == "pooling" else "/classify")
    line = token_refusal(str(endpoint).rstrip("/") + str(path))
    if line is not None:
        raise HarnessArgsError(line)


def check_model(name: str) -> None:
    """The model must be registered (ours are, once the plugin is active)."""
    from lm_eval.api.registry import model_registry

    from prb_tasks.plugin import MODELS

    if name in model_registry:
        return
    raise HarnessArgsError(
        f"prb eval: unknown --model '{name}'{did_you_mean(name, list(model_registry.keys()))}; "
        f"prb's models: {', '.join(MODELS)}; lm-eval's include hf, vllm, litellm, local-chat-completions "
        "(`prb eval --help`)"
    )


def _missing_tasks(message: str) -> str:
    from prb_tasks.plugin import plugin_task_names

    names = [n.strip() for n in message.removeprefix("Tasks not found:").split(",") if n.strip()]
    parts = [f"'{n}'{did_you_mean(n, plugin_task_names())}" for n in names]
    return (f"prb eval: unknown task {', '.join(parts)}; `prb tasks` lists prb's tasks, "
            "`lm-eval ls tasks` lm-eval's own")


def _prb_section(results: dict[str, Any]) -> dict[str, Any]:
    """What ``prb eval`` adds to the results file under the key ``prb``.

    ``version`` is the plugin version; ``data_sources`` maps each prb task to the
    data it read: ``kind`` (``sample``, ``local`` or ``hub``), ``location`` (folder
    or HF dataset id), ``subset`` and ``rows`` (before ``--limit``).
    """
    from prb_tasks.data import provenance

    return {
        "version": __version__,
        "data_sources": provenance.results_section(provenance.for_results(results)),
    }


def _compact(results: dict[str, Any], full_tables: bool) -> bool:
    """Print prb's compact table instead of lm-eval's: every task of the run is ours."""
    from prb_tasks.plugin import plugin_task_names

    names = set((results.get("results") or {}))
    return not full_tables and bool(names) and names <= set(plugin_task_names())


@contextlib.contextmanager
def _hooks(captured: dict[str, Any], full_tables: bool = False, compact: bool = False,
           log_samples: bool = True) -> Iterator[None]:
    """Watch lm-eval's run: keep its results (adding the ``prb`` section before they
    are saved) and samples, turn its configuration errors into one line, and hold back
    its result tables when prb prints its compact one instead.

    Args:
        captured: filled with the run's results, samples and whether prb prints its table.
        full_tables: print lm-eval's own tables too.
        compact: let prb-judge keep compact chat contexts; the samples file is written
            with them expanded (:mod:`prb_tasks.judge.chat_context`).
        log_samples: the run writes samples (``--log_samples``), whose ``prompt_hash``
            compact contexts then take as they are made.
    """
    import lm_eval
    import lm_eval._cli.run as cli_run
    import lm_eval.evaluator as evaluator
    from lm_eval.config.evaluate_config import EvaluatorConfig
    from lm_eval.loggers.evaluation_tracker import EvaluationTracker

    from prb_tasks.judge.chat_context import compact_contexts, expand_samples, fix_prompt_hashes

    original_evaluate = lm_eval.simple_evaluate
    original_from_cli = EvaluatorConfig.__dict__["from_cli"]
    original_git_hash = getattr(evaluator, "get_git_commit_hash", None)
    original_save_samples = EvaluationTracker.__dict__["save_results_samples"]

    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        results = original_evaluate(*args, **kwargs)
        if isinstance(results, dict):
            if compact and results.get("samples"):
                fix_prompt_hashes(results["samples"])
            results["prb"] = _prb_section(results)
            _redact_results(results)
            captured["results"] = results
            captured["samples"] = results.get("samples")  # lm-eval pops them before printing
            captured["compact"] = _compact(results, full_tables)
        return results

    def quiet_print(*values: Any, **kwargs: Any) -> None:
        # lm-eval's run command prints its model line and tables with print(); only the
        # tables' text (and that line) are held back, anything else it prints passes.
        text = " ".join(str(v) for v in values)
        if captured.get("compact") and (text.startswith("|") or "gen_kwargs: (" in text or not text.strip()):
            return
        print(*values, **kwargs)

    def from_cli(cls: Any, namespace: Any) -> Any:
        try:
            return original_from_cli.__func__(cls, namespace)
        except (ValueError, TypeError, OSError) as exc:
            raise HarnessArgsError(f"prb eval: {str(exc).splitlines()[0]}") from None

    def save_results_samples(self: Any, task_name: str, samples: Any) -> None:
        original_save_samples(self, task_name, samples=expand_samples(samples))

    lm_eval.simple_evaluate = simple_evaluate
    cli_run.print = quiet_print  # module global: shadows the builtin in that module only
    EvaluatorConfig.from_cli = classmethod(from_cli)
    if compact:
        EvaluationTracker.save_results_samples = save_results_samples
    if original_git_hash is not None:
        evaluator.get_git_commit_hash = _quiet_git_hash
    try:
        with compact_contexts(compact, prompt_hashes=log_samples):
            yield
    finally:
        EvaluationTracker.save_results_samples = original_save_samples
        lm_eval.simple_evaluate = original_evaluate
        del cli_run.print
        EvaluatorConfig.from_cli = original_from_cli
        if original_git_hash is not None:
            evaluator.get_git_commit_hash = original_git_hash


def _redact_results(results: dict[str, Any]) -> None:
    """Hide credentials in what lm-eval is about to write into the results file, in place.

    lm-eval copies ``--model_args`` into ``config`` and into every task's ``metadata``, so a
    key in a URL's query (``api_base=...?key=...``, which a server may need) would be
    written four times for a three-subset group. The samples are left alone: they hold
    replies, which the judge redacted when it received them.

    Args:
        results: what ``simple_evaluate`` returned.
    """
    from prb_tasks.common.redact import redact_data

    for key in [k for k in results if k != "samples"]:
        results[key] = redact_data(results[key])


def _compact_contexts_fit(namespace: Any) -> bool:
    """Whether compact chat contexts can be used: nothing but prb eval's samples writer
    may read the contexts (lm-eval's request cache keeps them for a later process,
    W&B and Trackio log the samples themselves)."""
    return not any(getattr(namespace, name, None) for name in ("cache_requests", "wandb_args", "trackio_args"))


def _quiet_git_hash() -> str | None:
    """lm-eval's ``git describe`` for the results file, without git's "fatal: not a git
    repository" on the terminal of every run started outside a checkout."""
    import subprocess

    try:
        return subprocess.check_output(["git", "describe", "--always"],
                                       stderr=subprocess.DEVNULL).strip().decode()
    except (subprocess.CalledProcessError, FileNotFoundError):
        from lm_eval.loggers.utils import get_commit_from_path

        return get_commit_from_path(os.getcwd())


def _after_run(captured: dict[str, Any], args: HarnessArgs, started: float, plain: bool = False) -> int:
    """Print the compact table (unless lm-eval's were printed), what the run read and the
    legend; save prb-judge's usage; the exit status.

    Args:
        plain: the run was typed as plain ``lm_eval``, whose parser has no ``--full_tables``.
    """
    from prb_tasks.common.redact import redact
    from prb_tasks.common.terminal import fit_lines
    from prb_tasks.data import provenance
    from prb_tasks.judge.usage import failed_line, stopped_line, take_last_summary
    from prb_tasks.plugin import plugin_task_names
    from prb_tasks.report.run_table import FULL_TABLES_FLAG, compact_lines, model_line
    from prb_tasks.scoring.lacking import lacking_lines
    from prb_tasks.scoring.legend import legend_lines
    from prb_tasks.scoring.negative_ties import negative_ties_lines

    results = captured.get("results")
    summary = take_last_summary()
    if results is not None:
        ours = set(plugin_task_names())
        table, shown = compact_lines(results, ours, captured.get("samples")) if captured.get("compact") else ([], None)
        head = [redact(model_line(results)), *table] if table else []
        lines = provenance.summary_lines(provenance.for_results(results))
        legend = legend_lines(results, ours, shown if table else None)
        if legend:
            lines += ["Metrics:", *(f"  {line}" for line in legend)]
        limit = _whole_limit(args.settings.get("limit"))
        configs = results.get("configs") or {}
        if limit and any(name in ours and (cfg or {}).get("output_type") == "generate_until"
                         for name, cfg in configs.items()):
            # lm-eval's --limit counts documents; a judge task's document is one judgment, not a pair.
            lines.append(f"Limit: --limit {limit} counted documents: on the judge tasks each is one judgment (one "
                         "request), and a pair is judged in each order it is shown in, so this is fewer pairs than "
                         f"{limit} (n counts the judgments)")
        if table and args.settings.get("predict_only"):
            # lm-eval computes no metrics with --predict_only: the table's cells are all "-".
            lines.append("Predict only: lm-eval wrote the replies (the samples files) and computed no metrics, "
                         "so the table shows '-'; run without --predict_only for the numbers")
        if table and plain:
            lines.append(f"lm-eval's full tables: run it as `prb eval ... {FULL_TABLES_FLAG}`, "
                         "or with PRB_LM_EVAL_HOOK=0 set")
        elif table:
            lines.append(f"lm-eval's full tables: add {FULL_TABLES_FLAG}")
        # Last, where a reader looks: numbers that rest on output the model did not give.
        # Every task counts: a task of the user's that includes one of ours (another N for
        # Best-of-N) has our metrics under its own name.
        lines += lacking_lines(results, set(results.get("results") or {}))
        lines += negative_ties_lines(results)  # allenai's floor is -1%: say what a negative score is
        from prb_tasks.judge.reasoning_budget import reasoning_line

        reasoning = reasoning_line(summary) if summary is not None else None
        if reasoning:  # replies whose budget went to hidden reasoning, named apart from other parse failures
            lines.append(redact(reasoning))
        failed = failed_line(summary) if summary is not None else None
        if failed:  # the table's last line: numbers that a re-run would change
            lines.append(redact(as_typed(failed, plain)))
        # The table keeps its rows; every sentence under it is wrapped by words to 120 columns.
        lines = head + fit_lines(lines)
        if lines:
            print("\n".join(lines))
    try:
        written = write_judge_usage(summary, args.output_path, started)
    except OSError as exc:
        # A full disk ends here too; the summary was printed above, nothing is lost but the file.
        print(as_typed(f"prb eval: could not save the judge's usage summary under {args.output_path} "
                       f"({exc.strerror or exc}); it is printed above", plain), file=sys.stderr)
        written = None
    if written is not None:
        from prb_tasks.common.terminal import shown_path

        print(f"prb-judge usage summary: {shown_path(written)}")
    stopped = stopped_line(summary) if summary is not None else None
    if stopped:
        # Last, so it is not lost above lm-eval's table; exit 3: the results are incomplete.
        print(redact(as_typed(stopped, plain)), file=sys.stderr)
        return STOPPED_EARLY
    return 0


def _whole_limit(value: Any) -> int | None:
    """``--limit`` as a whole number of documents (None: not given, or a share such as 0.5)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number >= 1 and number.is_integer() else None


def write_judge_usage(summary: dict | None, output_path: str | None, started: float) -> Path | None:
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


def preflight(args: HarnessArgs) -> None:
    """Check the ``--metadata`` keys and each family's data settings before lm-eval
    loads the model, which can take minutes for a large RM; the loaders check again."""
    from prb_tasks.common.taskindex import task_info
    from prb_tasks.documents.metadata import MetadataError, MetadataSpec, check_options, family_modules

    known = task_info()
    by_family: dict[str, dict[str, Any]] = {}
    for task in args.tasks:
        if task in known:
            by_family.setdefault(known[task].family, {})[task] = known[task]
    shots = args.settings.get("num_fewshot")
    if by_family and shots not in (None, 0, "0"):
        # lm-eval would draw examples from the test documents themselves and prepend them
        # to prompts that already carry the user's context: not the benchmark's protocol.
        ours = ", ".join(t for t in args.tasks if t in known)
        raise HarnessArgsError(f"prb eval: --num_fewshot {shots}: prb tasks ({ours}) are zero-shot, each prompt "
                               "already carries the user's context; drop --num_fewshot")
    modules = family_modules()
    specs = {family: module.METADATA for family, module in modules.items()}

    def families_checks() -> None:
        for family, tasks in by_family.items():
            check = getattr(modules.get(family), "preflight", None)
            if check is not None:
                check(tasks, args.metadata, args.settings)

    if by_family and set(args.tasks) <= set(known) and set(by_family) <= set(specs):
        # Every task is ours: a --metadata key none of their families takes is a mistake.
        keys = {k: v for family in by_family for k, v in specs[family].keys.items()}
        try:
            check_options(MetadataSpec(" and ".join(sorted(by_family)), keys), args.metadata, whole_run=True)
        except MetadataError:
            # A family's own check may know the slip better (data_dir given to a custom-data task, which
            # reads data_path): its line first, else the unknown key's.
            families_checks()
            raise
    families_checks()


def _narrow_patterns(args: HarnessArgs, plain: bool = False) -> None:
    """Narrow a pattern of prb's tasks to those the backend runs (:mod:`prb_tasks.cli.task_patterns`)."""
    from prb_tasks.cli.task_patterns import narrow
    from prb_tasks.common.terminal import fit

    tasks, notes = narrow(args.model, args.tasks)
    if not notes:
        return
    args.settings["tasks"] = tasks
    args.namespace.tasks = list(tasks)
    for line in notes:
        print(fit(as_typed(line, plain)), file=sys.stderr, flush=True)


def prepare(argv: list[str], plain: bool = False) -> HarnessArgs:
    """Parse and check a ``prb eval`` command line; load the plugin for it.

    Args:
        argv: the command line (``prb eval`` left out).
        plain: typed as plain ``lm_eval``: a note printed here starts ``prb:``.

    Raises:
        HarnessArgsError: a mistake found before anything runs.
    """
    from prb_tasks.cli import outputs
    from prb_tasks.plugin import activate, register_models

    args = parse(argv)
    check_key_arguments(args)
    check_model_arguments(args)
    # Task names before the key: a user fixing a missing key should not then meet a typo.
    check_tasks(args.tasks, own_folders=bool(args.settings.get("include_path")))
    check_judge_key(args)
    check_output_path(args.output_path)
    check_cache_path(args.settings.get("use_cache"))
    register_models()
    check_model(args.model)
    _narrow_patterns(args, plain)
    from prb_tasks.cli.chat_flag import settle_chat_template
    from prb_tasks.plugin import only_plugin_tasks

    note = settle_chat_template(args, only_plugin_tasks(args.tasks))
    if note:
        print(as_typed(note, plain), flush=True)
    declare(args)
    preflight(args)
    activate(args.tasks)
    outputs.install(args.settings.get("gen_kwargs"))
    return args


def run_eval(argv: list[str], plain: bool = False) -> int:
    """Run lm-eval with our models and tasks available; return the exit status.

    Args:
        argv: arguments as ``lm_eval run`` takes them.
        plain: typed as plain ``lm_eval`` (:mod:`prb_tasks.cli.lm_eval_hook` routes it here).
    """
    from prb_tasks.common.private import owner_only_writes

    try:
        with owner_only_writes():  # plain `lm_eval` comes here without `prb`'s main
            return _run(argv, plain)
    except BrokenPipeError:
        # `prb eval ... | head`: the reader is gone (results are saved before the
        # tables are printed); stop writing without a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(argv: list[str], plain: bool = False) -> int:
    if any(arg in ("-h", "--help") for arg in argv):
        from prb_tasks.common.terminal import fit

        # lm-eval's own help has lines of 200 columns and more (its examples): wrapped by words too.
        print(fit(help_text()))
        print(fit(run_parser().format_help()), end="")
        return 0
    from prb_tasks.cli.planner_cli import run_planner, wants_planner

    if wants_planner(argv):
        # Two ordinary lm-eval runs (planner, then judge), each through this function.
        return run_planner(argv, lambda stage: run_eval(stage, plain))
    from prb_tasks.judge.errors import RunStopped
    from prb_tasks.report.run_table import FULL_TABLES_FLAG

    # prb's own flag: lm-eval's parser must not see it.
    full_tables = FULL_TABLES_FLAG in argv
    argv = [a for a in argv if a != FULL_TABLES_FLAG]
    captured: dict[str, Any] = {}
    try:
        args = prepare(argv, plain)
        captured["args"] = args
        from lm_eval.utils import setup_logging

        setup_logging()
        started = time.time()
        from prb_tasks.cli.running import prb_eval_running

        # lm-eval logs samples for --predict_only too.
        logs = any(getattr(args.namespace, name, False) for name in ("log_samples", "predict_only"))
        with _hooks(captured, full_tables, compact=_compact_contexts_fit(args.namespace), log_samples=logs), \
                prb_eval_running():
            args.namespace.func(args.namespace)
    except RunStopped as exc:
        # A dry run or submitted batches: stopped on purpose, before any results.
        print(as_typed(str(exc), plain), flush=True)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        from prb_tasks.common.redact import redact
        from prb_tasks.judge.usage import interrupted_line, take_last_summary

        # Backends may say what was saved (``KeyboardInterrupt("prb-rm: ...")``); the
        # judge leaves its usage summary, which says how many answers were stored.
        summary = take_last_summary()
        line = str(exc) or (interrupted_line(summary) if summary is not None else INTERRUPTED_LINE)
        print(redact(as_typed(line, plain)), file=sys.stderr, flush=True)
        return INTERRUPTED
    except PRBError as exc:
        _print_error(exc, plain)
        return 2
    except ValueError as exc:
        # lm-eval's own answer to a misspelled task name is a traceback.
        if not str(exc).startswith("Tasks not found"):
            raise
        print(as_typed(_missing_tasks(str(exc)), plain), file=sys.stderr)
        return 2
    except Exception as exc:  # only a server that cannot be reached is answered here
        unreachable = unreachable_line(captured.get("args"), exc)
        if unreachable is None:
            raise
        # The backend's other requests fail the same way; asyncio would print each one's
        # traceback ("Task exception was never retrieved") as the process ends.
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        print(as_typed(unreachable, plain), file=sys.stderr, flush=True)
        return 2
    finally:
        declare(None)
    return _after_run(captured, args, started, plain)
