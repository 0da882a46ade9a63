"""Install hints name a line that works for how prb was installed (issue 49, item 4)."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

from prb_tasks.common import install_hint

CHECKOUT = Path(install_hint.__file__).resolve().parents[2]


class _Dist:
    def __init__(self, direct_url: dict | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct_url is None else json.dumps(self.direct_url)


@pytest.fixture
def installed(monkeypatch):
    """Make prb look installed with the given ``direct_url.json`` (None: from an index; "absent": not at all)."""

    def install(direct_url):
        def distribution(name):
            assert name == "prb-tasks"
            if direct_url == "absent":
                raise metadata.PackageNotFoundError(name)
            return _Dist(direct_url)

        monkeypatch.setattr(metadata, "distribution", distribution)
        install_hint._source.cache_clear()

    yield install
    install_hint._source.cache_clear()


def test_an_editable_install_of_this_checkout_names_it(installed, monkeypatch, tmp_path):
    installed({"url": CHECKOUT.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.chdir(CHECKOUT)
    assert install_hint.pip_install("rl") == "pip install -e '.[rl]'"  # the README's own line
    monkeypatch.chdir(tmp_path)
    assert install_hint.pip_install("rl") == f"pip install -e '{CHECKOUT}[rl]'"


def test_an_install_from_the_index_or_a_folder_or_no_install(installed, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    installed(None)  # a wheel from a package index records no direct_url.json
    assert install_hint.pip_install("train") == "pip install 'prb-tasks[train]'"
    installed({"url": "https://example.org/prb_tasks-0.1.0-py3-none-any.whl", "archive_info": {}})
    assert install_hint.pip_install("train") == "pip install 'prb-tasks[train]'"
    installed({"url": CHECKOUT.as_uri(), "dir_info": {}})  # `pip install .` from the checkout
    assert install_hint.pip_install("train") == f"pip install '{CHECKOUT}[train]'"
    installed("absent")  # running from a checkout on PYTHONPATH
    assert install_hint.pip_install("rm") == f"pip install -e '{CHECKOUT}[rm]'"


def test_an_editable_install_of_another_checkout_names_the_one_that_runs(installed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    installed({"url": (tmp_path / "other").as_uri(), "dir_info": {"editable": True}})
    assert install_hint.pip_install("rl") == f"pip install -e '{CHECKOUT}[rl]'"


def test_the_train_extra_holds_what_the_docs_say_it_holds():
    import tomllib

    extras = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    names = {requirement.split(">")[0].split("=")[0].split("[")[0] for requirement in extras["train"]}
    said = (CHECKOUT / "docs" / "personalization.md").read_text(encoding="utf-8")
    listed = said.split("the `train` extra (", 1)[1].split(")", 1)[0].split(";", 1)[1]
    assert {name.strip(" \n.") for name in listed.split(",")} == names  # before: trl was said, not held
    assert "prb-tasks[" not in said  # prb-tasks is on no package index: that line never worked
