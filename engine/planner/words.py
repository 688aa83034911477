"""Numbers in plain words for the planner's answers and tables: durations and money
(``duration_text``, ``money_text``), without exponents or raw floats."""
from __future__ import annotations

import math


def _plain(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits without an exponent ("0.0617", "2,500")."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{round(x, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def duration_text(ms: float) -> str:
    """A latency in plain words: "0.0617 ms", "16.9 ms", "2.5 s", "52.2 s" (s from 1 s)."""
    ms = float(ms)
    if math.isnan(ms):
        return "not known"
    if not math.isfinite(ms):
        return "unstable"
    return f"{_plain(ms / 1000.0)} s" if abs(ms) >= 1000 else f"{_plain(ms)} ms"


def money_text(usd: float) -> str:
    """Dollars in plain words: "$0.00001", "$0.292", "$81.94", "$22,761"."""
    usd = float(usd)
    if not math.isfinite(usd):
        return f"${usd:g}"
    return (f"${_plain(usd)}" if abs(usd) < 10 else f"${usd:,.2f}" if abs(usd) < 1000
            else f"${usd:,.0f}")


__all__ = ["duration_text", "money_text"]
