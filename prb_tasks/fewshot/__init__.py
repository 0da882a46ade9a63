"""Few-shot user adaptation: evaluate a personalization *method*, not a fixed model.

``split`` holds the protocol (seen and unseen users, each unseen user's support pool
and fixed query set); ``method`` the interface a method implements and ``registry``
how one is found by name (``User`` carries demographics and profile text, ``Pair`` the
reason and value tags of a choice); ``context`` renders a user as text to a budget and
``demographics`` as feature columns; ``linear`` and ``baselines`` the shipped CPU baselines;
``sources`` every user's pairs and the split a run shares; ``features`` text-embedding
features; ``metrics`` the k-curve statistics; ``evaluate`` runs a method over a split outside
the harness (benchmarks, tests); ``model`` is the ``prb-method`` lm-eval backend.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.fewshot.method import Method, MissingUserInfo, Pair, Post, Response, SeenUser, User
    from prb_tasks.fewshot.model import MethodLM
    from prb_tasks.fewshot.registry import MethodError, available, build, resolve

__all__ = [
    "available",
    "build",
    "Method",
    "MethodError",
    "MethodLM",
    "MissingUserInfo",
    "Pair",
    "Post",
    "resolve",
    "Response",
    "SeenUser",
    "User",
]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.fewshot.method": ("Method", "MissingUserInfo", "Pair", "Post", "Response", "SeenUser", "User"),
    "prb_tasks.fewshot.model": ("MethodLM",),
    "prb_tasks.fewshot.registry": ("MethodError", "available", "build", "resolve"),
})
