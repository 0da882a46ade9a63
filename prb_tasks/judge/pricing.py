"""Dollars per call.

Order of trust: prices the user gave (``input_cost_per_mtok`` / ``output_cost_per_mtok``,
for local or unlisted models), then litellm's own pricing of the reply, then litellm's
price table for the model id. When none applies the cost is *unknown* (None), never 0.

Provider batches (``batch=true``) are priced with litellm's listed batch price for the
model when it has one, else at :data:`BATCH_DISCOUNT` of the standard price (OpenAI and
Anthropic both charge half); prices given in model_args get the same discount.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from prb_tasks.judge.client import CallResult
from prb_tasks.judge.options import JudgeSettings
from prb_tasks.judge.price_table import model_info


@dataclass(frozen=True)
class Price:
    """Per-token prices.

    Attributes:
        input_per_token: dollars per prompt token.
        output_per_token: dollars per completion token (reasoning included).
        source: ``model_args`` (user-supplied) or ``litellm`` (its price table).
    """

    input_per_token: float
    output_per_token: float
    source: str

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """Dollars for a call, or None if the token counts are missing."""
        if input_tokens is None or output_tokens is None:
            return None
        return input_tokens * self.input_per_token + output_tokens * self.output_per_token


# Share of the standard price charged for batch requests when litellm lists no batch price.
BATCH_DISCOUNT = 0.5


@lru_cache(maxsize=64)
def litellm_price(model: str, suffix: str = "") -> Price | None:
    """litellm's listed price for a model id, if it has one (litellm itself is not imported).

    Args:
        model: litellm model id.
        suffix: ``""`` for the standard price, ``"_batches"`` for the batch price.
    """
    info = model_info(model)
    if info is None:
        return None
    pin, pout = info.get(f"input_cost_per_token{suffix}"), info.get(f"output_cost_per_token{suffix}")
    if not isinstance(pin, (int, float)) or not isinstance(pout, (int, float)):
        return None
    return Price(float(pin), float(pout), "litellm batch price" if suffix else "litellm")


def discounted(price: Price) -> Price:
    """``price`` at :data:`BATCH_DISCOUNT`, for batches without a listed batch price."""
    return Price(price.input_per_token * BATCH_DISCOUNT, price.output_per_token * BATCH_DISCOUNT,
                 f"{price.source} at {BATCH_DISCOUNT:.0%} for batches")


class Pricer:
    """Prices calls for one judge.

    Args:
        settings: the judge's settings (model id and any user prices).
    """

    def __init__(self, settings: JudgeSettings) -> None:
        self.model = settings.model_id
        self.user = (
            Price(settings.input_cost_per_mtok / 1e6, settings.output_cost_per_mtok / 1e6, "model_args")
            if settings.input_cost_per_mtok is not None and settings.output_cost_per_mtok is not None
            else None
        )

    def listed(self) -> Price | None:
        """The price used when the reply carries none: user-supplied, else litellm's table."""
        return self.user or litellm_price(self.model)

    def batch(self) -> Price | None:
        """The price of a request sent in a provider batch (see the module docstring)."""
        if self.user is not None:
            return discounted(self.user)
        listed = litellm_price(self.model, "_batches")
        if listed is not None:
            return listed
        standard = litellm_price(self.model)
        return discounted(standard) if standard is not None else None

    def cost(self, result: CallResult) -> float | None:
        """Dollars for one reply (None: unknown)."""
        if self.user is not None:
            return self.user.cost(result.input_tokens, result.output_tokens)
        if result.provider_cost is not None:
            return result.provider_cost
        table = litellm_price(self.model)
        return table.cost(result.input_tokens, result.output_tokens) if table else None
