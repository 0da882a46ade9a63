"""The start-up hook that lets plain ``lm_eval`` see prb's tasks and models (issue 34).

Each test runs a fresh interpreter with the hook module on its path (as the ``.pth``
file does at start-up), mostly against a simulated lm-eval written to a temporary folder,
so what lm-eval versions would do (read entry points themselves, or not) can be tested.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from tests.runner import REPO
from tests.watchdog import run_watched

STARTUP = REPO / "prb_tasks" / "_startup"

# A simulated lm-eval 0.4.13: its registry fills itself with the built-in models only
# while empty, its TaskManager takes include_path/include_defaults, its CLI has Run._execute.
FAKE = {
    "lm_eval/__init__.py": "",
    "lm_eval/api/__init__.py": "",
    "lm_eval/api/registry.py": """
        class Registry(dict):
            def register(self, name, target):
                self[name] = target
        model_registry = Registry()
        def get_model(name):
            if len(model_registry) == 0:
                import lm_eval.models  # noqa: F401
            return model_registry[name]
    """,
    "lm_eval/models/__init__.py": """
        from lm_eval.api.registry import model_registry
        model_registry.register("hf", target="lm_eval.models.huggingface:HFLM")
    """,
    "lm_eval/tasks/__init__.py": """
        class TaskManager:
            def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
                self.include_path = include_path
                self.include_defaults = include_defaults
    """,
    "lm_eval/_cli/__init__.py": "",
    "lm_eval/_cli/run.py": """
        class Run:
            @staticmethod
            def _execute(args):
                print("lm-eval's own run", args)
    """,
}

# What lm-eval's development branch does (upstream PR #4013), and the open task proposal:
# the registry and the task manager load the groups' entry points themselves.
READS_ENTRY_POINTS = {
    "lm_eval/api/registry.py": FAKE["lm_eval/api/registry.py"] + """
        import importlib.metadata as md
        def load_plugins(group, registry):
            return [ep.name for ep in md.entry_points(group=group)]
    """,
    "lm_eval/models/__init__.py": FAKE["lm_eval/models/__init__.py"] + """
        from lm_eval.api.registry import load_plugins
        load_plugins("lm_eval.models", model_registry)
    """,
    "lm_eval/tasks/__init__.py": FAKE["lm_eval/tasks/__init__.py"] + """
        import importlib.metadata
        PLUGIN_TASKS = [ep.load()() for ep in importlib.metadata.entry_points(group="lm_eval.tasks")]
    """,
}


def _write_fake(root: Path, overrides: dict[str, str] | None = None) -> Path:
    for rel, text in {**FAKE, **(overrides or {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _python(code: str, *, fake: Path | None, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` after the hook is installed (as the .pth file does); it prints one JSON line."""
    paths = [str(fake)] if fake is not None else []
    paths += [str(REPO), str(STARTUP)]
    full_env = {k: v for k, v in os.environ.items() if k != "PRB_LM_EVAL_HOOK"}
    full_env.update({"PYTHONPATH": os.pathsep.join(paths), **(env or {})})
    proc = run_watched([sys.executable, "-c", "import _prb_lm_eval_hook\n" + textwrap.dedent(code)],
                       capture_output=True, text=True, env=full_env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"out": json.loads(proc.stdout.strip().splitlines()[-1]), "stderr": proc.stderr}


def test_start_up_imports_nothing_but_the_finder(tmp_path: Path) -> None:
    result = _python("""
        import json, sys
        names = sorted(n for n in sys.modules if n.startswith(("prb_tasks", "lm_eval", "importlib.metadata")))
        finders = [type(f).__name__ for f in sys.meta_path]
        print(json.dumps({"names": names, "first": finders[0]}))
    """, fake=_write_fake(tmp_path))
    assert result["out"]["names"] == []
    assert result["out"]["first"] == "_Finder"


def test_tasks_and_models_join_lm_eval_after_its_builtins(tmp_path: Path) -> None:
    result = _python("""
        import json, sys
        from lm_eval.tasks import TaskManager
        from lm_eval.api.registry import get_model, model_registry
        plain = TaskManager().include_path
        given = TaskManager(include_path="mine").include_path
        twice = TaskManager(None, ["mine", plain[0]]).include_path
        target = get_model("prb-rm")
        import lm_eval._cli.run
        print(json.dumps({"plain": plain, "given": given, "twice": twice, "target": target,
                          "models": sorted(model_registry),
                          "finder_left": any(type(f).__name__ == "_Finder" for f in sys.meta_path)}))
    """, fake=_write_fake(tmp_path))
    out = result["out"]
    ours = str(REPO / "prb_tasks" / "tasks")
    assert out["plain"] == [ours]
    assert out["given"] == ["mine", ours]
    assert out["twice"] == ["mine", ours]
    assert out["target"] == "prb_tasks.rm.model:RewardModelLM"
    # The built-in model survives: registering before the built-ins would have hidden it.
    assert out["models"] == ["hf", "prb-judge", "prb-method", "prb-rm"]
    assert out["finder_left"] is False
    assert result["stderr"] == ""


@pytest.mark.parametrize("value", ["0", "off"])
def test_switched_off_with_prb_lm_eval_hook(tmp_path: Path, value: str) -> None:
    result = _python("""
        import json, sys
        from lm_eval.tasks import TaskManager
        from lm_eval.api.registry import get_model, model_registry
        get_model("hf")
        print(json.dumps({"paths": TaskManager().include_path, "models": sorted(model_registry),
                          "finders": [type(f).__name__ for f in sys.meta_path]}))
    """, fake=_write_fake(tmp_path), env={"PRB_LM_EVAL_HOOK": value})
    assert result["out"] == {"paths": None, "models": ["hf"],
                             "finders": [f for f in result["out"]["finders"] if f != "_Finder"]}


def test_retires_when_lm_eval_reads_entry_points_itself(tmp_path: Path) -> None:
    result = _python("""
        import json
        from lm_eval.tasks import TaskManager
        from lm_eval.api.registry import get_model, model_registry
        get_model("hf")
        print(json.dumps({"paths": TaskManager().include_path, "models": sorted(model_registry)}))
    """, fake=_write_fake(tmp_path, READS_ENTRY_POINTS))
    # The simulated lm-eval loads entry points but registers nothing from them: whatever
    # prb's models it shows would have been added by the hook.
    assert result["out"] == {"paths": None, "models": ["hf"]}


def test_a_failing_hook_says_so_in_one_line_and_lm_eval_still_imports(tmp_path: Path) -> None:
    fake = _write_fake(tmp_path, {"lm_eval/tasks/__init__.py": "NOT_A_TASK_MANAGER = 1\n"})
    result = _python("""
        import json, lm_eval.tasks
        print(json.dumps({"ok": lm_eval.tasks.NOT_A_TASK_MANAGER}))
    """, fake=fake)
    assert result["out"] == {"ok": 1}
    lines = result["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prb: could not add prb's tasks and models to lm-eval")
    assert "PRB_LM_EVAL_HOOK=0" in lines[0]


def test_real_lm_eval_lists_prb_tasks_and_keeps_its_models() -> None:
    result = _python("""
        import json
        from lm_eval.tasks import TaskManager
        from lm_eval.api.registry import get_model, model_registry
        tm = TaskManager(include_defaults=False)
        model = get_model("prb-rm")
        print(json.dumps({"has_group": "personalized_rb" in tm.all_groups,
                          "has_task": "personalized_rb_sample_scalar" in tm.all_tasks,
                          "model": model.__name__, "hf": "hf" in model_registry,
                          "local": "local-chat-completions" in model_registry}))
    """, fake=None)
    assert result["out"] == {"has_group": True, "has_task": True, "model": "RewardModelLM",
                             "hf": True, "local": True}


def test_entry_points_name_the_models_prb_eval_registers() -> None:
    from prb_tasks.plugin import MODELS

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["lm_eval.models"] == MODELS
    wheel = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"]
    forced = wheel["targets"]["wheel"]["force-include"]
    assert forced["prb_tasks/_startup/prb_lm_eval_hook.pth"] == "prb_lm_eval_hook.pth"
    assert (STARTUP / "prb_lm_eval_hook.pth").read_text(encoding="utf-8").strip() == "import _prb_lm_eval_hook"


def test_lm_eval_run_goes_through_prb_eval_only_for_prb_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import prb_tasks.cli.evalcmd as evalcmd
    from prb_tasks.cli import lm_eval_hook as harness_hook

    seen: list = []

    class Run:
        @staticmethod
        def _execute(args):
            seen.append(("lm-eval", args))

    module = types.SimpleNamespace(Run=Run)
    harness_hook.wrap_run_command(module)
    harness_hook.wrap_run_command(module)  # a second time changes nothing
    monkeypatch.setattr(evalcmd, "run_eval", lambda argv, plain: seen.append(("prb", argv)) or 2)

    monkeypatch.setattr(sys, "argv", ["lm_eval", "run", "--model", "prb-rm", "--tasks", "personalized_rb_sample"])
    with pytest.raises(SystemExit) as stop:
        Run._execute("ns")
    assert stop.value.code == 2
    assert seen.pop() == ("prb", ["--model", "prb-rm", "--tasks", "personalized_rb_sample"])

    # lm-eval's own model on prb's tasks only, and a misspelt prb task: prb's checks and table.
    for tasks in ("personalized_rb_sample_scalar", "personalized_rb_sampel"):
        monkeypatch.setattr(sys, "argv", ["lm_eval", "run", "--model", "dummy", "--tasks", tasks])
        with pytest.raises(SystemExit):
            Run._execute("ns")
        assert seen.pop()[0] == "prb"

    # lm-eval's own runs, mixed runs and runs from Python stay lm-eval's.
    for argv in (["lm_eval", "run", "--model", "hf", "--tasks", "hellaswag"],
                 ["lm_eval", "run", "--model", "dummy", "--tasks", "hellaswag,personalized_rb_sample"],
                 ["python"]):
        monkeypatch.setattr(sys, "argv", argv)
        Run._execute("ns")
        assert seen.pop() == ("lm-eval", "ns")
    # Under prb eval itself the wrapper steps aside.
    monkeypatch.setattr(sys, "argv", ["lm_eval", "run", "--model", "prb-rm", "--tasks", "personalized_rb_sample"])
    with harness_hook.prb_eval_running():
        Run._execute("ns")
    assert seen.pop() == ("lm-eval", "ns")


def _real_lm_eval(args: list[str], cwd: Path):
    """The real ``lm_eval`` command line with the hook installed (as the .pth file does)."""
    from tests.runner import run_cli

    launch = ("import _prb_lm_eval_hook, sys; sys.argv[0] = 'lm_eval'; "
              "from lm_eval.__main__ import cli_evaluate; cli_evaluate()")
    return run_cli(args, cwd=cwd, program=[sys.executable, "-c", launch],
                   env={"PYTHONPATH": os.pathsep.join([str(REPO), str(STARTUP)]), "PRB_LM_EVAL_HOOK": "1"})


def test_plain_lm_eval_errors_of_prb_runs_name_no_prb_eval(tmp_path: Path) -> None:
    """A prb run typed as plain `lm_eval` was not typed as `prb eval`: its lines say `prb:`."""
    proc = _real_lm_eval(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalr"],
                         tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("prb: unknown task 'personalized_rb_scalr' (did you mean 'personalized_rb_scalar'"), last
    assert "prb eval" not in proc.stderr and "Traceback" not in proc.stderr


def test_plain_lm_eval_with_bad_metadata_json_is_one_line_when_the_run_is_prbs(tmp_path: Path) -> None:
    proc = _real_lm_eval(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar",
                          "--metadata", '{"data_dir": "x"'], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "prb: argument --metadata: not valid JSON (Expecting ',' delimiter at line 1, column 17): {\"data_dir\": "
        "\"x\"; JSON needs double quotes around keys and strings"], proc.stderr[-3000:]
    # lm-eval's own run keeps lm-eval's own answer.
    own = _real_lm_eval(["--model", "hf", "--tasks", "hellaswag", "--metadata", "{data_dir: x}"], tmp_path)
    assert own.returncode != 0 and "Invalid JSON: {data_dir: x}" in own.stderr
