"""Find and render the Jinja prompt templates, in a sandbox.

Templates are looked up by name (e.g. ``judge/user.jinja``). A user can replace them
with ``--metadata``: ``templates`` = a folder holding files of the same names
(missing ones fall back to ours), or ``system_template`` / ``user_template`` = one file
each. Templates are rendered in a sandbox with limits (:mod:`prb_tasks.prompts.sandbox`)
so a template can reach neither Python internals nor unbounded memory or time, and an
undefined variable is an error rather than silent blank text. Every problem with a
template (not UTF-8, does not parse, include/import/extends, a limit, an error while
rendering) is one line naming the file and, where known, the line.

The templates that ship with prb are ours, not user code: they render in a plain Jinja
environment with the same options, which gives the same text (a test renders each in
both) in about a third of the sandbox's time; a profile prompt is rendered up to three
times per judgment.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined, TemplateError

from prb_tasks.common.errors import PRBError
from prb_tasks.common.resources import templates_dir
from prb_tasks.common.textfiles import read_text
from prb_tasks.prompts.sandbox import LimitedSandbox, TemplateFeatureRefused, TemplateLimit, budget_scope, prepare

#: A template whose source starts with this comment is rendered exactly, without the
#: ``strip()`` applied to ours (``prb templates official`` writes such templates).
VERBATIM_MARK = "{# prb: verbatim"


class TemplateProblem(PRBError):
    """A template that cannot be found or rendered; the message is one actionable line."""


@dataclass(frozen=True)
class TemplateRef:
    """A resolved template file.

    Attributes:
        path: the file.
        source: its text, read once.
    """

    path: Path
    source: str

    def mentions(self, name: str) -> bool:
        """Whether the text names ``name`` at all.

        A template reads a variable only by its name (it cannot list or look up the others),
        so a variable it never names need not be computed.
        """
        return name in self.source

    @property
    def digest(self) -> str:
        """Short hash of the text, recorded so results say which wording was used."""
        return hashlib.sha256(self.source.encode()).hexdigest()[:12]


def resolve(name: str, folder: str | None = None, override: str | None = None) -> TemplateRef:
    """Locate template ``name``.

    Args:
        name: path relative to the templates folder, e.g. ``judge/system.jinja``.
        folder: a user folder searched before ours.
        override: a specific file that replaces this template.
    """
    candidates: list[Path] = []
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            # Callers pass system_template for the system prompts (their names hold "system"), else user_template.
            key = "system_template" if "system" in Path(name).name else "user_template"
            raise TemplateProblem(f"prb: --metadata {key} '{path}' does not exist; give a Jinja file, which replaces "
                                  f"{name}")
        candidates.append(path)
    if folder:
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise TemplateProblem(f"prb: --metadata templates '{root}' does not exist or is not a folder; give a "
                                  "folder of replacement templates with the bundled names (judge/system.jinja, ...)")
        candidates.append(root / name)
    candidates.append(templates_dir() / name)
    for path in candidates:
        if path.is_file():
            return TemplateRef(path.resolve(), read_text(path, "template", TemplateProblem))
    raise TemplateProblem(f"prb: no template '{name}' found in {', '.join(map(str, candidates))}")


_OPTIONS: dict[str, Any] = dict(
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
    autoescape=False,
)


@lru_cache(maxsize=1)
def _environment() -> LimitedSandbox:
    return LimitedSandbox(**_OPTIONS)


@lru_cache(maxsize=1)
def _bundled_environment() -> Environment:
    return Environment(**_OPTIONS)


def is_bundled(ref: TemplateRef) -> bool:
    """Whether ``ref`` is one of the templates that ship with prb (rendered outside the sandbox)."""
    return ref.path.is_relative_to(templates_dir().resolve())


@lru_cache(maxsize=64)
def _compile(ref: TemplateRef):  # returns a jinja Template
    try:
        if is_bundled(ref):
            plain = _bundled_environment()
            # Compiled under its path, so errors name the file and line as the sandbox's do.
            code = plain.compile(ref.source, filename=str(ref.path))
            return plain.template_class.from_code(plain, code, plain.make_globals(None))
        return prepare(_environment(), ref.source, str(ref.path))
    except TemplateError as exc:
        line = getattr(exc, "lineno", None)
        where = f"{ref.path}:{line}" if line else str(ref.path)
        raise TemplateProblem(f"prb: template {where} does not parse: {exc}") from None
    except TemplateFeatureRefused as exc:
        raise TemplateProblem(f"prb: template {ref.path}:{exc.lineno} {exc}") from None
    except (RecursionError, MemoryError):
        # Jinja's parser (and Python's compiler after it) recurse once per nesting level.
        raise TemplateProblem(f"prb: template {ref.path} is nested too deeply to read (parentheses, brackets "
                              "or blocks inside each other hundreds of levels deep); simplify it") from None


def _template_line(ref: TemplateRef, exc: BaseException) -> str:
    """``path:line`` of the innermost template line in ``exc``'s traceback (jinja maps frames to lines)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(ref.path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{ref.path}:{line}" if line else str(ref.path)


def render(ref: TemplateRef, **variables: Any) -> str:
    """Render ``ref`` with ``variables``; errors name the file and the problem.

    Args:
        ref: the template.
        **variables: values the template may use.
    """
    template = _compile(ref)
    try:
        with budget_scope():
            text = template.render(**variables)
        return text if ref.source.startswith(VERBATIM_MARK) else text.strip()
    except TemplateError as exc:
        available = ", ".join(sorted(variables))
        raise TemplateProblem(
            f"prb: template {_template_line(ref, exc)} failed to render: {exc} (available variables: {available})"
        ) from None
    except TemplateLimit as exc:
        raise TemplateProblem(f"prb: template {_template_line(ref, exc)}: {exc}; simplify the template") from None
    except Exception as exc:  # noqa: BLE001 - a template is user code: whatever it raises is its own error
        message = str(exc).splitlines()[0] if str(exc).strip() else ""
        raise TemplateProblem(
            f"prb: template {_template_line(ref, exc)} failed to render: {type(exc).__name__}: {message}"
        ) from None
