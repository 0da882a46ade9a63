"""Every docs page renders as written: its headings are headings and its prose is not code.

``mkdocs build --strict`` passed while docs/personalization.md had text after a closing fence
(```` ``` Personalized RewardBench has...````): the fence did not close, and 130 lines rendered
inside out (four headings gone, prose shown as code, the next fence opening one). Each page is
rendered here with the site's own Markdown extensions (mkdocs.yml) and compared with what its
source says: every heading outside a code block is a heading on the page, every code block of the
source is one code block on the page (issue 63 item 2).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.runner import REPO

markdown = pytest.importorskip("markdown", reason='python-markdown comes with the docs extra (pip install ".[docs]")')

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^#{1,6}\s+\S")


def site_extensions() -> tuple[list[str], dict[str, Any]]:
    """The Markdown extensions mkdocs.yml gives the site, with their settings."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # mkdocs' !!python tags
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    names, settings = [], {}
    for entry in config["markdown_extensions"]:
        name, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, None)
        names.append(name)
        if options:
            settings[name] = options
    return names, settings


def source_shape(text: str) -> tuple[list[int], int, list[str]]:
    """What the source says: the lines of headings outside code, how many code blocks, and
    each line where a fence closes with text after it (which does not close it)."""
    headings: list[int] = []
    blocks = 0
    problems: list[str] = []
    open_fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if open_fence is None:
            if match and not (match.group(2)[0] == "`" and "`" in match.group(3)):
                open_fence, blocks = match.group(2), blocks + 1
            elif HEADING.match(line):
                headings.append(number)
            continue
        if match and match.group(2)[0] == open_fence[0] and len(match.group(2)) >= len(open_fence):
            if match.group(3).strip():
                problems.append(f"line {number}: text after a closing fence: {line.strip()[:60]!r}")
            else:
                open_fence = None
    if open_fence is not None:
        problems.append("a code block is never closed")
    return headings, blocks, problems


class _Shape(HTMLParser):
    """Counts the rendered headings and code blocks (``<pre>``)."""

    def __init__(self) -> None:
        super().__init__()
        self.headings = 0
        self.blocks = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            self.headings += 1
        elif tag == "pre":
            self.blocks += 1


def rendered_shape(text: str) -> tuple[int, int]:
    names, settings = site_extensions()
    html = markdown.Markdown(extensions=names, extension_configs=settings).convert(text)
    shape = _Shape()
    shape.feed(html)
    return shape.headings, shape.blocks


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_the_page_renders_as_its_source_says(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    headings, blocks, problems = source_shape(text)
    assert problems == [], f"{page.relative_to(REPO)}: {problems}"
    assert rendered_shape(text) == (len(headings), blocks), (
        f"{page.relative_to(REPO)}: rendered (headings, code blocks) differ from the source's")


def test_the_check_finds_text_after_a_closing_fence() -> None:
    broken = "# Title\n\n```\ncode\n``` prose that should be a paragraph\n\n## Lost heading\n\nmore\n"
    headings, blocks, problems = source_shape(broken)
    assert problems == ["line 5: text after a closing fence: '``` prose that should be a paragraph'",
                        "a code block is never closed"]
    assert rendered_shape(broken) != (len(headings), blocks)  # the page does not render as the source reads
    fixed = broken.replace("``` prose", "```\n\nprose")
    assert source_shape(fixed)[2] == [] and rendered_shape(fixed) == (2, 1)
