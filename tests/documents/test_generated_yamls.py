"""The personalized_rb task YAMLs are the generator's output, byte for byte (issue 38).

``tools/generate_personalized_rb_yamls.py`` writes them from one table of variants; a
hand edit of a generated file, or a variant added to the table but not generated, fails here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("generate_personalized_rb_yamls",
                                                  ROOT / "tools" / "generate_personalized_rb_yamls.py")
    module = importlib.util.module_from_spec(spec)
    # A dataclass looks its module up in sys.modules while it is being built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_committed_yamls_equal_the_generator_output() -> None:
    gen = _generator()
    files = gen.generated()
    assert len(files) == 40  # 10 variants x (a group + 3 subsets)
    committed = {p.name: p.read_text(encoding="utf-8") for p in gen.FOLDER.glob("personalized_rb*.yaml")}
    assert sorted(committed) == sorted(files)
    for name, text in files.items():
        assert committed[name] == text, name
    assert gen.main(["--check"]) == 0


def test_check_names_a_hand_edited_file(tmp_path: Path, monkeypatch, capsys) -> None:
    gen = _generator()
    for name, text in gen.generated().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "personalized_rb_scalar_art.yaml").write_text("include: _scalar.yaml\n", encoding="utf-8")
    monkeypatch.setattr(gen, "FOLDER", tmp_path)
    assert gen.main(["--check"]) == 1
    assert "personalized_rb_scalar_art.yaml: differs from the generator's output" in capsys.readouterr().out
    assert gen.main([]) == 0
    assert gen.main(["--check"]) == 0
