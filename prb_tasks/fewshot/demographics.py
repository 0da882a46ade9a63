"""Demographics as a feature vector, for methods that condition a model on them.

:class:`DemographicEncoder` is fitted on users a method may learn from (the seen users in
``learn``) and then turns any user's ``demographics`` into the same columns:

- a number (not a bool) becomes one column, standardised with the fitted users' mean and
  spread;
- a text or a bool becomes one column per value the fitted users had (one-hot); a list of
  texts one column per value (multi-hot);
- a nested object is flattened (``home.city``);
- every attribute also gets a ``name=?`` column, 1 when the user lacks it (or has a value
  the fitted users never had, or one of another kind), so a missing attribute is not
  mistaken for an average one.

Columns are sorted by name, so the same users give the same columns on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from prb_tasks.fewshot.method import MissingUserInfo, User, thaw


def flatten(demographics: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted names (``{"home": {"city": "Porto"}}`` -> ``home.city``);
    empty values are left out."""
    out: dict[str, Any] = {}
    for name, value in thaw(demographics).items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            out.update(flatten(value, key + "."))
        elif value is not None and value != "" and value != []:
            out[key] = value
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def categories(value: Any) -> list[str] | None:
    """A categorical value as the category names it sets; None if it is not categorical."""
    if isinstance(value, (str, bool)):
        return [str(value).lower() if isinstance(value, bool) else value]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    return None


@dataclass
class DemographicEncoder:
    """Fixed columns for every user's demographics (see the module's description).

    Attributes:
        columns: the column names, in vector order (``age``, ``country=Japan``, ``age=?``).
    """

    columns: list[str] = field(default_factory=list)
    _numeric: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def fit(self, users: Iterable[User]) -> DemographicEncoder:
        """Learn the columns from ``users`` (the seen users); one line if none has demographics.

        Args:
            users: the users to learn the columns from.
        """
        users = list(users)
        numbers: dict[str, list[float]] = {}
        names: set[str] = set()
        for user in users:
            for key, value in flatten(user.demographics).items():
                names.add(f"{key}=?")
                if _is_number(value):
                    numbers.setdefault(key, []).append(float(value))
                elif (cats := categories(value)) is not None:
                    names.update(f"{key}={c}" for c in cats)
        if not names:
            family = next((u.family for u in users if u.family), "")
            raise MissingUserInfo(f"no user{' of ' + family if family else ''} has demographics, so there is nothing "
                                  "to encode; use data whose users have \"demographics\" (your own file)")
        self._numeric = {k: (float(np.mean(v)), float(np.std(v)) or 1.0) for k, v in numbers.items()}
        self.columns = sorted(names | set(self._numeric))
        self._index = {c: i for i, c in enumerate(self.columns)}
        return self

    def encode(self, user: User) -> np.ndarray:
        """The user's vector (``len(columns)`` numbers; zeros and ``=?`` ones where it lacks attributes).

        Args:
            user: any user (fitted or not).
        """
        if not self.columns:
            raise ValueError("DemographicEncoder.encode: fit() it on the seen users first")
        x = np.zeros(len(self.columns))
        given = flatten(user.demographics)
        for column in self.columns:
            if column.endswith("=?"):
                key = column[:-2]
                x[self._index[column]] = float(not self._set(x, key, given.get(key)))
        return x

    def _set(self, x: np.ndarray, key: str, value: Any) -> bool:
        """Fill ``key``'s columns from ``value``; False if nothing matched a fitted column."""
        if value is None:
            return False
        if _is_number(value) and key in self._numeric:
            mean, spread = self._numeric[key]
            x[self._index[key]] = (float(value) - mean) / spread
            return True
        hit = False
        for category in categories(value) or []:
            index = self._index.get(f"{key}={category}")
            if index is not None:
                x[index], hit = 1.0, True
        return hit
