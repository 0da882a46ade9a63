"""Read an lm-eval command line exactly as lm-eval itself reads it.

``prb eval`` and our data loaders need to know what a run asked for (its tasks,
model, ``--model_args``, ``--metadata``, output folder), including settings that
come from a ``--config`` YAML file. Rather than scanning argv by hand, this module
builds lm-eval's own ``run`` parser and merges the YAML with lm-eval's precedence
(command line over YAML over defaults). Every mistake becomes a
:class:`HarnessArgsError` with one line naming the option or the key.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from prb_tasks.common.errors import PRBError
from prb_tasks.common.suggest import did_you_mean

# Options whose value lm-eval turns into a dict (``k=v,...`` or a JSON object).
_DICT_OPTIONS = ("model_args", "metadata", "gen_kwargs", "wandb_args", "wandb_config_args",
                 "hf_hub_log_args", "trackio_args")


class HarnessArgsError(PRBError):
    """A command line or ``--config`` file lm-eval would reject; one line."""


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments:"):
            options = [o for action in self._actions for o in action.option_strings]
            unknown = [w for w in message.split(":", 1)[1].split() if w.startswith("-")]
            message += "".join(did_you_mean(w.split("=", 1)[0], options) for w in unknown[:1])
        raise HarnessArgsError(f"{self.prog}: {message} (see `prb eval --help`)")


@dataclass
class HarnessArgs:
    """What one ``lm_eval run`` command line asks for.

    Attributes:
        namespace: lm-eval's parsed arguments, ready for its ``run`` command.
        settings: the command line merged over the ``--config`` YAML, with
            lm-eval's precedence; keys are lm-eval's option names.
        metadata_keys: keys given to ``--metadata`` (command line or YAML).
        model_arg_keys: keys given to ``--model_args`` (command line or YAML).
        argv: the command line as given (``prog`` excluded), to tell a user how to repeat it.
    """

    namespace: argparse.Namespace
    settings: dict[str, Any]
    metadata_keys: frozenset[str] = field(default_factory=frozenset)
    model_arg_keys: frozenset[str] = field(default_factory=frozenset)
    argv: tuple[str, ...] = ()

    @property
    def tasks(self) -> list[str]:
        """Requested task names and YAML paths, comma lists split."""
        raw = self.settings.get("tasks") or []
        items = raw.split(",") if isinstance(raw, str) else [p for t in raw for p in str(t).split(",")]
        return [t.strip() for t in items if t.strip()]

    @property
    def model(self) -> str:
        """The ``--model`` name (lm-eval's default: ``hf``)."""
        return str(self.settings.get("model") or "hf")

    @property
    def model_args(self) -> dict[str, Any]:
        """``--model_args`` as a dict."""
        return dict(self.settings.get("model_args") or {})

    @property
    def metadata(self) -> dict[str, Any]:
        """``--metadata`` as a dict."""
        return dict(self.settings.get("metadata") or {})

    @property
    def output_path(self) -> str | None:
        """``--output_path``, if given."""
        value = self.settings.get("output_path")
        return str(value) if value else None


def run_parser(prog: str = "prb eval") -> argparse.ArgumentParser:
    """lm-eval's own ``run`` parser, raising :class:`HarnessArgsError` instead of exiting.

    Args:
        prog: program name shown in messages and help.
    """
    from lm_eval._cli.run import Run
    from lm_eval._cli.utils import MergeDictAction

    root = _OneLineParser(prog=prog)
    subparsers = root.add_subparsers(dest="command", parser_class=_OneLineParser)
    Run.create(subparsers)
    parser = subparsers.choices["run"]
    parser.prog = prog
    if parser.usage:
        parser.usage = parser.usage.replace("lm-eval run", prog)

    class _CheckedDict(MergeDictAction):
        # lm-eval lets a bad JSON object escape as a bare ValueError (a traceback);
        # turn it into an argparse error that names the option.
        def __call__(self, parser, namespace, values, option_string=None):
            try:
                super().__call__(parser, namespace, values, option_string)
            except HarnessArgsError:
                raise
            except ValueError as exc:
                parser.error(f"argument {option_string or self.dest}: {json_problem(values, exc)}")

    for action in parser._actions:  # argparse keeps no public list
        if type(action) is MergeDictAction:
            action.__class__ = _CheckedDict
        elif action.dest in _DICT_OPTIONS and callable(action.type):
            # lm-eval 0.5 parses some of them with a plain type function (``json.loads``).
            action.type = _checked_type(action.type)
    return parser


def _checked_type(inner: Any) -> Any:
    """``inner`` with its ValueError turned into the same one-line message as above."""

    def parse_value(value: str) -> Any:
        try:
            return inner(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(json_problem(value, exc)) from None

    return parse_value


def json_problem(values: Any, exc: ValueError) -> str:
    import json

    text = values[0] if isinstance(values, (list, tuple)) and values else str(values)
    if not str(text).lstrip().startswith("{"):
        if "=" not in str(text):
            return f"expected `key=value`, got {text!r}"
        return str(exc).splitlines()[0]
    try:
        json.loads(text)
    except json.JSONDecodeError as bad:
        return (f"not valid JSON ({bad.msg} at line {bad.lineno}, column {bad.colno}): {text}; "
                "JSON needs double quotes around keys and strings")
    except TypeError:
        pass
    return str(exc).splitlines()[0]


def parse(argv: list[str], prog: str = "prb eval") -> HarnessArgs:
    """Parse ``argv`` (the arguments of ``lm_eval run``) and merge its ``--config`` file.

    Args:
        argv: arguments without the program name; a leading ``run`` is allowed.
        prog: program name for messages.

    Raises:
        HarnessArgsError: an option lm-eval would reject, or a broken ``--config``.
    """
    argv = list(argv)
    if argv[:1] == ["run"]:
        argv = argv[1:]
    parser = run_parser(prog)
    namespace = parser.parse_args(argv)
    namespace.command = "run"
    yaml_settings: dict[str, Any] = {}
    if getattr(namespace, "config", None):
        yaml_settings = load_config_file(namespace.config, prog)
    cli = {k: v for k, v in vars(namespace).items() if (v or v == 0) and k not in ("command", "func")}
    # lm-eval's precedence: an option given on the command line replaces the YAML's
    # value as a whole (dicts included), as ``EvaluatorConfig.from_cli`` does.
    settings = {**yaml_settings, **cli}
    for key in _DICT_OPTIONS:
        if key in settings:
            settings[key] = _as_dict(settings[key], key, prog)
    metadata_keys = set(settings.get("metadata") or {})
    model_arg_keys = set(settings.get("model_args") or {})
    return HarnessArgs(namespace, settings, frozenset(metadata_keys), frozenset(model_arg_keys), tuple(argv))


def _as_dict(value: Any, option: str, prog: str) -> dict[str, Any]:
    if value in (None, ""):
        return {}
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        from lm_eval.utils import simple_parse_args_string

        try:
            return dict(simple_parse_args_string(value))
        except Exception as exc:  # noqa: BLE001 - lm-eval raises several types for a bad string
            raise HarnessArgsError(f"{prog}: {option} {value!r} is not key=value,...: {exc}") from None
    raise HarnessArgsError(f"{prog}: {option} must be key=value pairs or a mapping, got {type(value).__name__}")


def config_keys() -> list[str]:
    """Every key a ``--config`` YAML file may set (lm-eval's ``EvaluatorConfig`` fields)."""
    from dataclasses import fields

    from lm_eval.config.evaluate_config import EvaluatorConfig

    return sorted(f.name for f in fields(EvaluatorConfig))


def load_config_file(path: str, prog: str = "prb eval") -> dict[str, Any]:
    """Read a ``--config`` YAML file; unknown keys are named, with a near match.

    Args:
        path: the YAML file.
        prog: program name for messages.
    """
    import yaml

    file = Path(path).expanduser()
    if not file.is_file():
        raise HarnessArgsError(f"{prog}: --config file {path} does not exist")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise HarnessArgsError(f"{prog}: --config {path} is not valid YAML{where}: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessArgsError(f"{prog}: cannot read --config {path}: {exc}") from None
    except RecursionError:
        from prb_tasks.common.textfiles import too_deep

        raise HarnessArgsError(f"{prog}: {too_deep(f'--config {path}')}") from None
    if not isinstance(data, dict):
        raise HarnessArgsError(f"{prog}: --config {path} must be a mapping of option names to values")
    known = config_keys()
    for key in data:
        if key not in known:
            raise HarnessArgsError(
                f"{prog}: --config {path}: unknown key '{key}'{did_you_mean(str(key), known)}; "
                f"accepted: {', '.join(known)}"
            )
    return data


# -- what the current run asked for, for code that runs inside lm-eval -------------

_DECLARED: HarnessArgs | None = None


def declare(args: HarnessArgs | None) -> None:
    """Record the arguments of the run this process is executing (``prb eval`` does)."""
    global _DECLARED
    _DECLARED = args


def declared() -> HarnessArgs | None:
    """The arguments ``prb eval`` declared for the run in progress (None outside ``prb eval``)."""
    return _DECLARED


def current() -> HarnessArgs | None:
    """The arguments of the run in progress, when they can be known.

    ``prb eval`` declares them. Under plain ``lm_eval`` / ``python -m lm_eval`` the
    process's own command line is parsed again with lm-eval's parser. Inside a
    Python program calling lm-eval's API there is no command line: None.
    """
    if _DECLARED is not None:
        return _DECLARED
    program = Path(sys.argv[0]).name if sys.argv else ""
    parent = Path(sys.argv[0]).parent.name if sys.argv else ""
    if program not in ("lm_eval", "lm-eval") and not (program == "__main__.py" and parent == "lm_eval"):
        return None
    argv = sys.argv[1:]
    if argv[:1] in (["ls"], ["validate"]):
        return None
    try:
        with open(os.devnull, "w") as quiet:
            saved, sys.stderr = sys.stderr, quiet
            try:
                return parse(argv, prog="lm_eval")
            finally:
                sys.stderr = saved
    except (HarnessArgsError, SystemExit, ValueError):
        return None
