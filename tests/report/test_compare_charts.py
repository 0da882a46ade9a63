"""Charts for constructed runs, with a free ($0) judge and tied models: vector files written,
axes within the metric's range (read back from the SVG), no local path anywhere in them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from prb_tasks.report.build import build_report
from prb_tasks.report.charts import draw_charts
from tests.report_fixture import write_run

DATA = "/home/someone/private/prefs-copy"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("charts")
    source = {"kind": "local", "location": DATA, "subset": "x", "rows": 12}
    half = lambda key: int(key.split("/")[1]) % 2 == 0  # noqa: E731
    third = lambda key: int(key.split("/")[1]) % 3 != 0  # noqa: E731
    runs = root / "runs"
    write_run(runs / "paid", "personalized_rb", "prb-judge", {"model": "openai/gpt-4o-mini"}, third, usd=0.05,
              source=source)
    # Two free local judges with identical outcomes: a $0 cost and a tie.
    write_run(runs / "free", "personalized_rb", "prb-judge", {"model": "openai/qwen-local"}, half, usd=0.0,
              source=source)
    write_run(runs / "tie", "personalized_rb", "prb-judge", {"model": "ollama_chat/llama3"}, half, usd=0.0,
              source=source)
    write_run(runs / "rm", "personalized_rb_scalar", "prb-rm", {"scorer": "length"}, half, source=source)
    report = build_report([runs])
    assert draw_charts(report, root / "out") == []
    return root / "out"


def _ticks(svg: Path) -> dict[str, list[str]]:
    """Tick label texts of every axis, by axis group id (matplotlib names them)."""
    tree = ET.parse(svg)
    out: dict[str, list[str]] = {}
    for group in tree.iter(f"{SVG}g"):
        gid = group.get("id", "")
        if re.fullmatch(r"[xy]tick_\d+", gid):
            texts = ["".join(t.itertext()).strip() for t in group.iter(f"{SVG}text")]
            out.setdefault(gid[0], []).extend(t for t in texts if t)
    return out


def _texts(svg: Path) -> list[str]:
    return ["".join(t.itertext()) for t in ET.parse(svg).iter(f"{SVG}text")]


def test_every_chart_is_written_as_svg_pdf_and_png(charts: Path) -> None:
    names = {"accuracy", "cost", "subsets", "consistency", "length"}
    for name in names:
        (stem,) = {p.with_suffix("") for p in charts.glob(f"*_{name}.svg")}
        for fmt in ("svg", "pdf", "png"):
            assert stem.with_suffix(f".{fmt}").stat().st_size > 1000, (name, fmt)
        assert stem.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
    # 300 dpi: the PNG is far larger than a 110-dpi one of the same figure.
    from PIL import Image

    width = Image.open(next(charts.glob("*_accuracy.png"))).size[0]
    assert width > 1800


@pytest.mark.parametrize("name", ["accuracy", "consistency", "length", "cost", "subsets"])
def test_percentage_axes_stay_within_0_100(charts: Path, name: str) -> None:
    svg = next(charts.glob(f"*_{name}.svg"))
    ticks = _ticks(svg)
    numbers = [float(t) for axis in ticks.values() for t in axis if re.fullmatch(r"-?\d+(\.\d+)?", t)]
    assert numbers, ticks
    assert all(0 <= n <= 100 for n in numbers), (name, numbers)


def test_cost_axis_handles_free_models(charts: Path) -> None:
    ticks = _ticks(next(charts.glob("*_cost.svg")))["x"]
    assert "$0 (free)" in ticks
    # No garbled labels such as $1e-06: every tick is "$0 (free)" or a plain positive amount.
    assert all(t == "$0 (free)" or re.fullmatch(r"\$\d+(\.\d+)?", t) for t in ticks), ticks


def test_tied_models_share_one_label_and_no_path_in_any_chart(charts: Path) -> None:
    # The two free judges coincide: one label (one SVG text group) names both, one per line.
    labels = [["".join(t.itertext()) for t in g.iter(f"{SVG}text")]
              for g in ET.parse(next(charts.glob("*_cost.svg"))).iter(f"{SVG}g") if g.get("id", "").startswith("text_")]
    holding = [lines for lines in labels if any("qwen-local" in x or "llama3" in x for x in lines)]
    assert holding == [["openai/qwen-local", "ollama_chat/llama3"]], holding
    for svg in charts.glob("*.svg"):
        # Nor in the file names, which travel with the figures.
        assert "someone" not in svg.name and "private" not in svg.name and "prefs" not in svg.name, svg.name
        for text in _texts(svg):
            assert DATA not in text and "/home/" not in text, (svg.name, text)
        title = max(_texts(svg), key=len)
        assert "(local copy)" in " ".join(_texts(svg)), svg.name
        assert title


def test_every_chart_has_a_legend_or_colour_scale(charts: Path) -> None:
    for svg in charts.glob("*.svg"):
        ids = {g.get("id", "") for g in ET.parse(svg).iter(f"{SVG}g")}
        assert any(i.startswith("legend") for i in ids) or "subsets" in svg.name, svg.name
        if "subsets" in svg.name:
            assert "accuracy % (colour scale)" in _texts(svg)
