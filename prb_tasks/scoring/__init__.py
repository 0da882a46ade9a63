"""Turning model outputs into per-pair outcomes and metrics."""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.scoring.metrics import (
        acc_chosen_in_a,
        acc_chosen_in_b,
        double_game,
        game_vote,
        pair_all_correct,
        pair_consistency,
        position_bias,
        process_judge_both,
        process_judge_single,
        process_scalar,
        share_of_a,
    )

__all__ = [
    "acc_chosen_in_a",
    "acc_chosen_in_b",
    "double_game",
    "game_vote",
    "pair_all_correct",
    "pair_consistency",
    "position_bias",
    "process_judge_both",
    "process_judge_single",
    "process_scalar",
    "share_of_a",
]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.scoring.metrics": (
        "acc_chosen_in_a",
        "acc_chosen_in_b",
        "double_game",
        "game_vote",
        "pair_all_correct",
        "pair_consistency",
        "position_bias",
        "process_judge_both",
        "process_judge_single",
        "process_scalar",
        "share_of_a",
    ),
})
