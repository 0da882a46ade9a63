"""Dollars per call.

Order of trust: prices the user gave (``input_cost_per_mtok`` / ``output_cost_per_mtok``,
for local or unlisted models), then litellm's own pricing of the reply, then litellm's
price table for the model id. When none applies the cost is *unknown* (None), never 0.

Prompt-cache reads are priced at the provider's cached-input rate (litellm's
``cache_read_input_token_cost``; ``cached_input_cost_per_mtok`` in model_args) and
Anthropic's cache writes at its cache-write rate (``cache_creation_input_token_cost``);
without a listed rate those tokens cost the plain input price (never less than billed).

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
        cached_input_per_token: dollars per prompt token read from the provider's prompt
            cache (None: the plain input price).
        cache_write_per_token: dollars per prompt token written to the prompt cache
            (None: the plain input price).
    """

    input_per_token: float
    output_per_token: float
    source: str
    cached_input_per_token: float | None = None
    cache_write_per_token: float | None = None

    def cost(self, input_tokens: int | None, output_tokens: int | None, cached_tokens: int | None = None,
             written_tokens: int | None = None) -> float | None:
        """Dollars for a call, or None if the token counts are missing.

        Args:
            input_tokens: all prompt tokens, cache reads and writes included.
            output_tokens: completion tokens.
            cached_tokens: of ``input_tokens``, those read from the prompt cache.
            written_tokens: of ``input_tokens``, those written to the prompt cache.
        """
        if input_tokens is None or output_tokens is None:
            return None
        cached = min(cached_tokens or 0, input_tokens)
        written = min(written_tokens or 0, input_tokens - cached)
        plain = input_tokens - cached - written
        read_rate = self.input_per_token if self.cached_input_per_token is None else self.cached_input_per_token
        write_rate = self.input_per_token if self.cache_write_per_token is None else self.cache_write_per_token
        return (plain * self.input_per_token + cached * read_rate + written * write_rate
                + output_tokens * self.output_per_token)

    def cache_saving(self, cached_tokens: int) -> float:
        """Dollars ``cached_tokens`` prompt-cache reads saved against the plain input price."""
        if self.cached_input_per_token is None:
            return 0.0
        return cached_tokens * (self.input_per_token - self.cached_input_per_token)


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

    def rate(name: str) -> float | None:
        value = info.get(f"{name}{suffix}", info.get(name))
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    return Price(float(pin), float(pout), "litellm batch price" if suffix else "litellm",
                 rate("cache_read_input_token_cost"), rate("cache_creation_input_token_cost"))


def discounted(price: Price) -> Price:
    """``price`` at :data:`BATCH_DISCOUNT`, for batches without a listed batch price."""
    def half(value: float | None) -> float | None:
        return None if value is None else value * BATCH_DISCOUNT

    return Price(price.input_per_token * BATCH_DISCOUNT, price.output_per_token * BATCH_DISCOUNT,
                 f"{price.source} at {BATCH_DISCOUNT:.0%} for batches", half(price.cached_input_per_token),
                 half(price.cache_write_per_token))


class Pricer:
    """Prices calls for one judge.

    Args:
        settings: the judge's settings (model id and any user prices).
    """

    def __init__(self, settings: JudgeSettings) -> None:
        self.model = settings.model_id
        cached = settings.cached_input_cost_per_mtok
        self.user = (
            Price(settings.input_cost_per_mtok / 1e6, settings.output_cost_per_mtok / 1e6, "model_args",
                  cached / 1e6 if cached is not None else None)
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
        tokens = (result.input_tokens, result.output_tokens, result.cached_input_tokens, result.cache_write_tokens)
        if self.user is not None:
            return self.user.cost(*tokens)
        if result.provider_cost is not None:
            # litellm's own pricing of the reply already counts cache reads and writes.
            return result.provider_cost
        table = litellm_price(self.model)
        return table.cost(*tokens) if table else None

    def saving(self, result: CallResult) -> float:
        """Dollars the reply's prompt-cache reads saved against the plain input price (0: none or unknown)."""
        price = self.listed()
        return price.cache_saving(result.cached_input_tokens or 0) if price is not None else 0.0
