"""``prb templates official DIR``: the authors' prompts as a templates folder.

Their prompt files have no license, so we never ship their text: this command fetches
them from their public repository at a pinned commit (or reads them from a local
checkout with ``--source``) and writes templates for ``--metadata '{"templates": "DIR"}'``:

- ``prompts/pairwise_system.txt`` and ``prompts/pairwise_user.txt`` become
  ``DIR/judge/system.jinja`` and ``DIR/judge/user.jinja`` (``personalized_rb_official``);
- for the Best-of-N ``preset: official``: ``prompts/sample.txt`` (the policy's prompt),
  ``prompts/evaluation.txt`` (the grader's), and the system messages their
  ``BoN/sample.py`` and ``BoN/evaluate.py`` send (read from those scripts' syntax tree:
  the ``content`` of the first ``{"role": "system", ...}`` literal) become
  ``DIR/bon/official_*.jinja``. With ``--source``, a checkout without these files gets
  the judge templates only, and a note says so.

The written templates reproduce the authors' messages byte for byte:
- the file is read as their loader reads it (UTF-8, universal newlines, ``str.strip()``);
- every run of their text sits in ``{% raw %}`` blocks, so Jinja interprets none of it
  (a ``{%`` in the text, which could close a raw block, is emitted as a string instead);
- the first placeholder (``{question}``) is filled first, then the later ones
  (``{Response_A}``, ``{Response_B}``; ``{profile}``; ``{answer}``, ``{aspects}``) are
  replaced in the whole text, as their chained ``str.replace`` does (so a question
  that contains ``{Response_A}`` gets the response too);
- the files start with :data:`~prb_tasks.prompts.templates.VERBATIM_MARK`, which tells
  our renderer not to strip the result; the tags carry ``+`` so that ``lstrip_blocks``
  and ``trim_blocks`` leave the text alone.
"""

from __future__ import annotations

import ast
import hashlib
import io
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.prompts.templates import VERBATIM_MARK

REPO = "Martin-qyma/Personalized-RewardBench"
#: The commit our conversion was checked against (their repository's HEAD when read).
COMMIT = "a5c6814d22738c264f3c27576f54e50e04e16c10"
RAW_BASE = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}"


@dataclass(frozen=True)
class PromptFile:
    """One of the authors' prompt files.

    Attributes:
        path: path inside their repository.
        target: our template name it becomes.
        sha256: digest of the file at :data:`COMMIT` (a fact about it, not its text).
    """

    path: str
    target: str
    sha256: str
    placeholders: tuple[tuple[str, str], ...] = ()
    from_script: bool = False


#: The authors' placeholders of the pairwise judge prompt, in the order their code replaces them, and our variables.
PLACEHOLDERS = (("{question}", "question"), ("{Response_A}", "response_a"), ("{Response_B}", "response_b"))

SYSTEM = PromptFile("prompts/pairwise_system.txt", "judge/system.jinja",
                    "5438903c1bb5524de540cfac1a67edb5e174504138a0ef97dd89aab16a7ea3d7")
USER = PromptFile("prompts/pairwise_user.txt", "judge/user.jinja",
                  "6cdbfc0c2ce1eae2cc0640b61cda573a08399208725e28965e2cb2aad40f773c", PLACEHOLDERS)
# Best-of-N (their BoN/): the policy's and the grader's messages. The system messages are
# string literals inside their scripts, so the scripts themselves are fetched and pinned.
BON_POLICY_SYSTEM = PromptFile("BoN/sample.py", "bon/official_policy_system.jinja",
                               "6993b819b42d9e17a117f19787b37a110bd38f2a822c6b6bdecf01fd8412d482", from_script=True)
BON_POLICY = PromptFile("prompts/sample.txt", "bon/official_policy.jinja",
                        "9e62073422a5ed1d335c9700a61f9cb16828a021c04f054964900e9e63c883d1",
                        (("{question}", "question"), ("{profile}", "profile")))
BON_GRADE_SYSTEM = PromptFile("BoN/evaluate.py", "bon/official_grade_system.jinja",
                              "2151efb7c95e5c5745e7c9a6a11efc196165359d73e3f8b0466f12266876c7aa", from_script=True)
BON_GRADE = PromptFile("prompts/evaluation.txt", "bon/official_grade.jinja",
                       "8dc668fadab47db98e48267081852894d654064f5c6c6b9d2ee101af794b0230",
                       (("{question}", "question"), ("{answer}", "answer"), ("{aspects}", "aspects")))

JUDGE_FILES = (SYSTEM, USER)
BON_FILES = (BON_POLICY_SYSTEM, BON_POLICY, BON_GRADE_SYSTEM, BON_GRADE)
ALL_FILES = JUDGE_FILES + BON_FILES


def read_like_authors(data: bytes) -> str:
    """The text of a prompt file as the authors' loader sees it.

    Args:
        data: the file's bytes.
    """
    # open(path, "r", encoding="utf-8").read().strip(): universal newlines, then strip.
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read().strip()


def _literal(text: str) -> str:
    """Jinja source that renders ``text`` unchanged."""
    pieces = text.split("{%")
    return '{{ "{%" }}'.join(f"{{%+ raw %}}{piece}{{%+ endraw +%}}" if piece else "" for piece in pieces)


def _header(source: PromptFile) -> str:
    return (f"{VERBATIM_MARK}: written by `prb templates official` from {REPO} {source.path} at commit "
            f"{COMMIT[:7]}. Text inside raw blocks is theirs, unchanged. #}}")


def system_template(text: str, source: PromptFile = SYSTEM) -> str:
    """Template source for the system prompt (used as it is, no placeholders filled).

    Args:
        text: the prompt, as :func:`read_like_authors` returns it.
        source: which file it came from (named in the header comment).
    """
    return _header(source) + _literal(text)


def script_system_message(data: bytes, source: PromptFile) -> str:
    """The system message one of their scripts sends: the ``content`` of its first
    ``{"role": "system", "content": "..."}`` dict literal, exactly as the string reads.

    Args:
        data: the script's bytes.
        source: which script (named in the error).
    """
    try:
        tree = ast.parse(data.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        raise PRBError(f"prb: {source.path} is not a Python script this command can read; use the file of "
                       f"commit {COMMIT[:7]}") from None
    literals = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Dict)),
                      key=lambda node: (node.lineno, node.col_offset))  # walk() is breadth-first: source order
    for node in literals:
        fields = {key.value: value for key, value in zip(node.keys, node.values)
                  if isinstance(key, ast.Constant) and isinstance(key.value, str)}
        role, content = fields.get("role"), fields.get("content")
        if (isinstance(role, ast.Constant) and role.value == "system" and isinstance(content, ast.Constant)
                and isinstance(content.value, str)):
            return content.value
    raise PRBError(f"prb: {source.path} sends no literal system message; use the file of commit {COMMIT[:7]}")


def user_template(text: str, source: PromptFile = USER) -> str:
    """Template source for a user message, filling the placeholders like their code.

    Args:
        text: the template, as :func:`read_like_authors` returns it.
        source: which file it came from (its placeholders, in their replacement order;
            named in the header comment).
    """
    (question_mark, question_var), *later = source.placeholders
    body = "{{ " + question_var + " }}"
    filled = body.join(_literal(piece) for piece in text.split(question_mark))
    chain = "".join(f' | replace("{mark}", {var})' for mark, var in later)
    return _header(source) + "{%+ set prb_text %}" + filled + "{%+ endset +%}{{ prb_text" + chain + " }}"


def _download(source: PromptFile, base_url: str, timeout: float) -> bytes:
    url = f"{base_url}/{source.path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # fixed https URL
            return response.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise PRBError(
            f"prb: could not download {url} ({str(reason).splitlines()[0] if str(reason) else type(exc).__name__}); "
            "run `prb templates official DIR` on a machine with internet access and copy DIR here, or pass "
            f"--source <a git checkout of github.com/{REPO}>"
        ) from None


def fetch(base_url: str = RAW_BASE, timeout: float = 30.0,
          expected: dict[str, str] | None = None) -> dict[PromptFile, bytes]:
    """Download the prompt files and check them against the pinned commit.

    Args:
        base_url: where ``prompts/...`` live (the pinned raw GitHub URL).
        timeout: seconds per request.
        expected: sha256 per repository path of the files to fetch (default: every file
            of :data:`ALL_FILES`, with the pinned commit's digests).
    """
    digests = expected or {f.path: f.sha256 for f in ALL_FILES}
    files: dict[PromptFile, bytes] = {}
    for source in (f for f in ALL_FILES if f.path in digests):
        data = files[source] = _download(source, base_url, timeout)
        if hashlib.sha256(data).hexdigest() != digests[source.path]:
            raise PRBError(
                f"prb: {base_url}/{source.path} is not the file of commit {COMMIT[:7]} (sha256 differs); "
                "a proxy or login page may have answered: download it in a browser, check it and pass --source"
            )
    return files


def read_source(folder: Path) -> tuple[dict[PromptFile, bytes], list[PromptFile]]:
    """The prompt files of a local checkout, and those that differ from the pinned commit.

    The judge files must be there; the Best-of-N ones are read when all four are.

    Args:
        folder: root of a checkout of the authors' repository.
    """
    files: dict[PromptFile, bytes] = {}
    differ: list[PromptFile] = []
    wanted = JUDGE_FILES + (BON_FILES if all((folder / f.path).is_file() for f in BON_FILES) else ())
    for source in wanted:
        path = folder / source.path
        if not path.is_file():
            raise PRBError(f"prb: no {source.path} under {folder}; --source must be a checkout of "
                           f"github.com/{REPO}")
        files[source] = path.read_bytes()
        if hashlib.sha256(files[source]).hexdigest() != source.sha256:
            differ.append(source)
    return files, differ


def write_templates(target: Path, files: dict[PromptFile, bytes], force: bool = False) -> list[Path]:
    """Write the templates folder; refuse to overwrite different files unless ``force``.

    Args:
        target: the folder to create (``DIR``).
        files: raw bytes of the system and user prompt files.
        force: replace existing templates that differ.
    """
    sources: dict[str, str] = {}
    for source, data in files.items():
        if source.from_script:
            sources[source.target] = system_template(script_system_message(data, source), source)
        elif source.placeholders:
            sources[source.target] = user_template(read_like_authors(data), source)
        else:
            sources[source.target] = system_template(read_like_authors(data), source)
    paths = [target / name for name in sources]
    for path, text in zip(paths, sources.values()):
        if path.is_file() and path.read_text(encoding="utf-8") != text and not force:
            raise PRBError(f"prb: {path} already exists and differs; pass --force to replace it")
    for path, text in zip(paths, sources.values()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    return paths


def run(target: Path, source: Path | None = None, force: bool = False) -> int:
    """``prb templates official DIR``: print what was done; return an exit code.

    Args:
        target: the templates folder to write.
        source: a local checkout of the authors' repository instead of downloading.
        force: replace existing, different templates.
    """
    try:
        if source is not None:
            files, differ = read_source(source)
        else:
            files, differ = fetch(), []
        paths = write_templates(target, files, force)
    except PRBError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr, flush=True)
        return 2  # offline, a bad --source, a differing file: all fixable by the user
    for path in paths:
        print(f"wrote {path}")
    for changed in differ:
        print(f"note: {source}/{changed.path} differs from commit {COMMIT[:7]}; converted as it is")
    if not any(f in files for f in BON_FILES):
        print(f"note: {source} has no {BON_POLICY.path}, {BON_GRADE.path}, {BON_POLICY_SYSTEM.path} and "
              f"{BON_GRADE_SYSTEM.path}: no Best-of-N templates written (preset official of personalized_rb_bon* "
              "needs them)")
    print(f"use it with: prb eval ... --tasks personalized_rb_official --metadata '{{\"templates\": \"{target}\"}}'")
    if any(f in files for f in BON_FILES):
        print(f"and for Best-of-N: --tasks personalized_rb_bon_sample (then _grade, then personalized_rb_bon) "
              f"--metadata '{{\"preset\": \"official\", \"templates\": \"{target}\"}}'")
    return 0
