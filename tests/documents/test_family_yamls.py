"""The PersonalLLM and bring-your-own task YAMLs agree with their Python: every key a
task's ``process_results`` returns is in its ``metric_list`` (lm-eval stops with a
KeyError otherwise), and every function a YAML names exists."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from prb_tasks.common.resources import tasks_dir
from prb_tasks.documents import custom, personalllm
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm

FOLDERS = ("personalllm", "personalized_custom")


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


def _config(path: Path) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    if "include" in data:
        base = _config(path.parent / data.pop("include"))
        base.update(data)
        return base
    return data


def _utils(folder: Path):  # returns a module
    spec = importlib.util.spec_from_file_location(f"_prb_utils_{folder.name}", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _tasks() -> list[Path]:
    return sorted(p for f in FOLDERS for p in (tasks_dir() / f).glob("*.yaml") if not p.name.startswith("_"))


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_personalllm(tmp_path_factory.mktemp("pllm"), fixture_rows(16))


@pytest.mark.parametrize("path", _tasks(), ids=lambda p: p.stem)
def test_metric_list_covers_process_results(path: Path, copy_dir: Path) -> None:
    config = _config(path)
    utils = _utils(path.parent)
    functions = [v[1] for v in config.values() if isinstance(v, tuple)]
    functions += [m["aggregation"][1] for m in config["metric_list"] if isinstance(m["aggregation"], tuple)]
    for name in functions:
        assert hasattr(utils, name.removeprefix("utils.")), f"{path.name}: utils has no {name}"
    kwargs = dict(config["dataset_kwargs"])
    variant = kwargs.pop("variant")
    if path.parent.name == "personalllm":
        doc = personalllm.build_docs(variant, data_dir=str(copy_dir), n_users=3)[0]
    else:
        doc = custom.build_docs(variant, data_path=None if kwargs else "example", **kwargs)[0]
    if config["output_type"] == "multiple_choice":
        results: list[Any] = [(1.0 - 0.1 * i, False) for i in range(len(doc["choices"]))]
    else:
        from prb_tasks.replies.soft_verdict import SoftVerdict, with_mark

        # A judge reply with a soft verdict (logprobs=): the soft metrics are returned too.
        soft = with_mark("Fits.\nResult: A", SoftVerdict(0.8, 1.0))
        results = ["Fits.\nScore: 7" if variant == "bon_judge" else soft]
    process = getattr(utils, config["process_results"][1].removeprefix("utils."))
    returned = set(process(doc, results))
    listed = {m["metric"] for m in config["metric_list"]}
    assert returned <= listed, f"{path.name}: metric_list lacks {sorted(returned - listed)}"
    assert listed <= returned, f"{path.name}: process_results never returns {sorted(listed - returned)}"
