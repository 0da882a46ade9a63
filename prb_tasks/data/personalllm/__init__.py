"""PersonalLLM: prompts with eight scored responses, and simulated users built from them.

``constants`` holds the facts read from the authors' code (reward models, their
normalisation, weight order); ``reader``/``sources`` load the HF test split or a
local copy; ``users`` draws the simulated users; ``items`` turns users and prompts
into labelled pairs with a history of earlier choices.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.data.personalllm.schema import PromptRow

__all__ = ["PromptRow"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.data.personalllm.schema": ("PromptRow",),
})
