"""``--apply_chat_template`` set the way each backend needs it, before anything is sent.

lm-eval's habits meet prb's tasks in two ways. Its chat backends
(``local-chat-completions``, ``openai-chat-completions``, ``litellm``, ``anthropic-chat``...)
only send chat messages, and without ``--apply_chat_template`` lm-eval hands them plain text:
the run then stops on an assertion after requests went out. prb's own scorers (``prb-rm``,
``prb-method``) read the pairs themselves and have no chat template: with the flag, lm-eval
asks them for a tokenizer name and stops on ``NotImplementedError``. Here the flag is set or
dropped as the backend needs, with one line saying so; prb-judge always reads chat messages
and has it set without a word (it is the benchmark's protocol, not a habit to correct).
"""

from __future__ import annotations

from prb_tasks.common.harness_args import HarnessArgs

#: lm-eval backends that only send chat messages, by the class they are built on (checked on the
#: registered class), and the names of those the registry cannot load without their SDK.
_CHAT_NAMES = ("local-chat-completions", "openai-chat-completions", "azure-openai-chat-completions",
               "anthropic-chat", "anthropic-chat-completions", "litellm", "litellm-chat",
               "litellm-chat-completions")


def chat_backend(model: str) -> bool:
    """Whether lm-eval's ``model`` sends chat messages only (needs ``--apply_chat_template``).

    Args:
        model: the ``--model`` name.
    """
    if model in _CHAT_NAMES:
        return True
    if model.startswith("prb-"):
        return False
    try:
        from lm_eval.api.registry import get_model
        from lm_eval.models.openai_completions import LocalChatCompletion

        cls = get_model(model)
    except Exception:  # noqa: BLE001 - an unknown or unloadable backend: lm-eval says why later
        return False
    return isinstance(cls, type) and issubclass(cls, LocalChatCompletion)


def settle_chat_template(args: HarnessArgs, prb_tasks_only: bool) -> str | None:
    """Set or drop ``--apply_chat_template`` on ``args`` as its backend needs; the note to print.

    Args:
        args: the parsed command line (changed in place).
        prb_tasks_only: every task of the run is prb's (a mixed run is lm-eval's to judge).

    Returns:
        One line saying what was changed and why, or None when nothing was.
    """
    flag = args.settings.get("apply_chat_template")
    model = args.model
    if model == "prb-judge":
        # The judge reads chat messages; without a chat template lm-eval would flatten the
        # system prompt into the user turn, which is not the benchmark's protocol.
        if not flag:
            _set(args, True)
        return None
    if model.startswith("prb-"):
        if not flag:
            return None
        _set(args, False)
        return (f"prb eval: --apply_chat_template ignored: {model} scores each pair itself and uses no chat "
                "template (drop the flag)")
    if prb_tasks_only and not flag and chat_backend(model):
        _set(args, True)
        return (f"prb eval: --apply_chat_template added: {model} sends chat messages only, and prb's judge tasks "
                "are chat prompts (lm-eval stops without the flag)")
    return None


def _set(args: HarnessArgs, value: bool) -> None:
    args.namespace.apply_chat_template = value
    args.settings["apply_chat_template"] = value
