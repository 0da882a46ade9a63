"""A hub model on a machine without the hub: one line at once, or the local cache.

"At once" is counted, not timed (a loaded machine makes any time bound a flaky test): the
attempts to reach the hub (connections to its port, name lookups of other hosts). prb's
reachability check makes one and keeps the answer; transformers alone retries for about 40 s.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from prb_tasks.common.hub_reach import unreachable_reason
from prb_tasks.text import contriever
from prb_tasks.text.encoder import EncoderUnavailable
from tests.runner import closed_port

#: Connection attempts to the hub's (closed) port in the running test.
ATTEMPTS: list[Any] = []


@pytest.fixture
def hub_out_of_reach(monkeypatch, tmp_path):
    """The hub behind a closed local port, and an empty HF cache; attempts to reach it (a connection to
    that port, a name lookup of any other host) are counted in ATTEMPTS."""
    import huggingface_hub.constants as constants

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    original = socket.socket.connect
    ATTEMPTS.clear()

    def counted(sock: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and len(address) >= 2 and address[1] == port:
            ATTEMPTS.append(address)
        return original(sock, address)

    monkeypatch.setattr(socket.socket, "connect", counted)
    lookup = socket.getaddrinfo

    def looked_up(host: Any, *args: Any, **kwargs: Any) -> Any:
        # huggingface_hub read its endpoint at import: a request it makes goes to huggingface.co
        if host not in ("127.0.0.1", "localhost"):
            ATTEMPTS.append(("lookup", host))
        return lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", looked_up)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    unreachable_reason.cache_clear()
    yield tmp_path / "hub"
    unreachable_reason.cache_clear()


def test_uncached_hub_model_fails_at_once_in_one_line(hub_out_of_reach) -> None:
    with pytest.raises(EncoderUnavailable) as info:
        contriever.model_identity("facebook/contriever-msmarco")
    assert len(ATTEMPTS) == 1  # the reachability check alone, not transformers' retries
    message = str(info.value)
    assert "\n" not in message
    assert "the HF hub is out of reach (cannot connect to 127.0.0.1:" in message
    assert "not in the local cache" in message and "hf download facebook/contriever-msmarco" in message


def test_cached_hub_model_is_read_from_the_cache_only(hub_out_of_reach) -> None:
    snapshot = hub_out_of_reach / "models--org--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (hub_out_of_reach / "models--org--tiny" / "refs").mkdir()
    (hub_out_of_reach / "models--org--tiny" / "refs" / "main").write_text("abc123")
    assert contriever._hub_options("org/tiny") == {"local_files_only": True}
    with pytest.raises(EncoderUnavailable, match="org/other': the HF hub is out of reach"):
        contriever._hub_options("org/other")


def test_offline_switch_skips_the_check(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    unreachable_reason.cache_clear()
    assert contriever._hub_options("org/anything") == {}
    unreachable_reason.cache_clear()


def test_uncached_hub_reward_model_fails_at_once_in_one_line(hub_out_of_reach) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from prb_tasks.rm.errors import RMError
    from prb_tasks.rm.options import parse_options
    from prb_tasks.rm.scorers.hf import HFScorer

    with pytest.raises(RMError) as info:
        HFScorer(parse_options({"pretrained": "org/reward-model", "device": "cpu", "dtype": "float32"}))
    assert len(ATTEMPTS) == 1
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("prb-rm: cannot load pretrained='org/reward-model': the HF hub is out of reach")


def test_uncached_hub_backbone_for_prb_train_fails_at_once_in_one_line(hub_out_of_reach, tmp_path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from prb_tasks.train.command import train
    from prb_tasks.train.options import TrainError, parse

    options = parse({"data": "example", "architecture": "plain", "backbone": "org/backbone",
                     "out": str(tmp_path / "out")}, None)
    with pytest.raises(TrainError) as info:
        train(options, progress=False)
    assert len(ATTEMPTS) == 1
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("prb train: --backbone org/backbone: the HF hub is out of reach")
