"""A trained model's folder: the backbone (``save_pretrained``), its tokenizer, the
architecture's own weights and a small manifest saying what it is.

Layout::

    OUT/manifest.json       {"format": "prb-train/1", "architecture", "backbone", "family", "options", "users", ...}
    OUT/backbone/           the fine-tuned backbone and its tokenizer (Hugging Face format)
    OUT/head.safetensors    every weight outside the backbone (heads, encoders, user weights)

The folder is written under a temporary sibling name and renamed into place when whole
(:mod:`prb_tasks.common.atomic`), so a kill leaves the previous checkpoint or the new one,
never a mix; the manifest's ``files`` holds the sha256 of every file of the backbone and
head, compared by :func:`load` before the model is used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prb_tasks.common.atomic import aside, check_digests, crash_point, digests
from prb_tasks.train.options import TrainError

FORMAT = "prb-train/1"
MANIFEST = "manifest.json"
#: What the manifest's digests vouch for: everything a load reads besides the manifest.
VOUCHED = ("backbone", "head.safetensors")


def save(folder: str | Path, model: Any, tokenizer: Any, manifest: dict[str, Any]) -> Path:
    """Write ``model`` (a :class:`~prb_tasks.train.models.RewardModel`) to ``folder``, manifest last.

    Args:
        folder: where (created); :func:`prb_tasks.train.command.train` gives the staging
            folder, which it then renames into place.
        model: the trained model.
        tokenizer: its tokenizer.
        manifest: architecture, backbone, family, options, users and training facts.
    """
    from safetensors.torch import save_file

    folder = Path(folder)
    (folder / "backbone").mkdir(parents=True, exist_ok=True)
    model.backbone.save_pretrained(folder / "backbone")
    tokenizer.save_pretrained(folder / "backbone")
    own = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items() if not k.startswith("backbone.")}
    crash_point("train:between-files")
    save_file(own, str(folder / "head.safetensors"))
    files = digests(folder, VOUCHED)
    (folder / MANIFEST).write_text(json.dumps({"format": FORMAT, **manifest, "files": files}, indent=2) + "\n",
                                   encoding="utf-8")
    return folder


def is_checkpoint(folder: Path) -> bool:
    """Whether ``folder`` holds a manifest of ours (a checkpoint ``prb train`` may replace).

    Args:
        folder: an existing folder.
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # a nesting too deep for the parser is not ours either
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT


def check_out(out: Path, given: str) -> None:
    """One line when ``--out`` is a file or a non-empty folder that is not a prb train checkpoint.

    Args:
        out: the resolved folder.
        given: the path as the user wrote it.
    """
    if out.exists() and not out.is_dir():
        raise TrainError(f"prb train: --out {given} is a file; give a folder for the checkpoint")
    if out.is_dir() and any(out.iterdir()) and not is_checkpoint(out):
        raise TrainError(f"prb train: --out {given} is a folder with other files in it (no prb train {MANIFEST}); "
                         "give a new or empty folder: prb train replaces only a checkpoint of its own")


def verify(folder: Path, manifest: dict[str, Any], who: str) -> None:
    """One line when a file of the checkpoint is missing, changed or not its own.

    Args:
        folder: the checkpoint folder.
        manifest: its manifest.
        who: the command or model asking, for messages.
    """
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise TrainError(f"{who}: {folder / MANIFEST} records no digests of its files (an older prb wrote it); "
                         "train the model again with this prb")
    recorded = {str(k): str(v) for k, v in files.items()}
    seen = _stamp(folder, recorded)
    if seen in _VERIFIED:
        return  # prb-method checks at construction, then loads: the files are hashed once
    problem = check_digests(folder, recorded, VOUCHED)
    if problem:
        raise TrainError(f"{who}: checkpoint '{folder}' is damaged: {problem}; train the model again "
                         "(prb train --out writes a whole checkpoint)")
    _VERIFIED.add(seen)


#: Checkpoints whose files matched their digests, as (folder, digests, each file's size and mtime).
_VERIFIED: set[tuple] = set()


def _stamp(folder: Path, recorded: dict[str, str]) -> tuple:
    """What changes when any vouched file does (its size or mtime), with the digests it must match."""
    stats = []
    for path in sorted(p for part in VOUCHED for p in ([folder / part] if (folder / part).is_file()
                                                        else (folder / part).rglob("*"))):
        try:
            info = path.stat()
        except OSError:
            continue
        stats.append((path.as_posix(), info.st_size, info.st_mtime_ns))
    return str(folder.resolve()), tuple(sorted(recorded.items())), tuple(stats)


def read_manifest(folder: str | Path, who: str) -> dict[str, Any]:
    """The manifest of a checkpoint folder; one line when ``folder`` is not one.

    Args:
        folder: the folder ``prb train --out`` wrote.
        who: the command or model asking, for messages.
    """
    path = Path(folder).expanduser()
    if not path.exists() and aside(path).is_dir():
        raise TrainError(f"{who}: checkpoint '{folder}' does not exist: a prb train was killed while replacing "
                         f"it; the previous one is {aside(path)} (rename it back, or train again)")
    if not path.exists():
        raise TrainError(f"{who}: checkpoint '{folder}' does not exist; give the folder `prb train --out` wrote")
    if not (path / MANIFEST).is_file():
        raise TrainError(f"{who}: '{folder}' is not a prb train checkpoint (no {MANIFEST}); give the folder "
                         "`prb train --out` wrote")
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise TrainError(f"{who}: {path / MANIFEST} is not JSON ({exc}); train the model again") from None
    except RecursionError:  # json's parser recurses once per nesting level
        raise TrainError(f"{who}: {path / MANIFEST} nests too deeply to be a {FORMAT} manifest; "
                         "train the model again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise TrainError(f"{who}: {path / MANIFEST} is not a {FORMAT} manifest; train the model again with this prb")
    return manifest


def load(folder: str | Path, who: str, accept: tuple[str, ...] | None = None,
         device: str = "cpu") -> tuple[Any, Any, dict]:
    """(model, tokenizer, manifest) of a checkpoint folder, in eval mode on ``device``.

    Args:
        folder: the folder ``prb train --out`` wrote.
        who: the command or model asking, for messages.
        accept: the architectures the caller can use (None: all); another is one line.
        device: where to put the model.
    """
    manifest = read_manifest(folder, who)
    arch = manifest.get("architecture")
    if accept is not None and arch not in accept:
        raise TrainError(f"{who}: checkpoint '{folder}' is a '{arch}' model; this needs a "
                         f"{' or '.join(repr(a) for a in accept)} model (train one with prb train --architecture "
                         f"{accept[0]}), or run it with --model prb-method --model_args method=trained,"
                         f"checkpoint={folder}")
    try:
        from safetensors.torch import load_file
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:  # was a ModuleNotFoundError traceback naming safetensors
        from prb_tasks.common.install_hint import pip_install

        raise TrainError(f"{who}: a checkpoint of prb train needs the 'train' extra (missing: {exc.name}); "
                         f"install it: {pip_install('train')}") from None

    from prb_tasks.train.models import CLASSES

    path = Path(folder).expanduser()
    if not isinstance(arch, str) or arch not in CLASSES:
        # A manifest without (or with an unknown) architecture was a KeyError traceback.
        raise TrainError(f"{who}: {path / MANIFEST} names no architecture this prb knows ({arch!r}; known: "
                         f"{', '.join(CLASSES)}); train the model again with this prb")
    verify(path, manifest, who)
    from prb_tasks.common.plain_logs import plain_transformers_logs

    plain_transformers_logs()  # loaded under prb-method's bar: its own bar moved the cursor in a log file
    backbone = AutoModel.from_pretrained(path / "backbone")
    tokenizer = AutoTokenizer.from_pretrained(path / "backbone")
    model = CLASSES[arch](backbone, manifest["options"], len(manifest.get("users", [])))
    result = model.load_state_dict(load_file(str(path / "head.safetensors")), strict=False)
    missing = [k for k in result.missing_keys if not k.startswith("backbone.")]
    if missing or result.unexpected_keys:
        raise TrainError(f"{who}: {path / 'head.safetensors'} does not match a '{arch}' model "
                         f"({', '.join((missing + result.unexpected_keys)[:3])}); train the model again")
    return model.to(device).eval(), tokenizer, manifest
