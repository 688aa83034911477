"""Share links: every input of a page mirrored in the URL's query parameters.

A page declares its inputs as ``Field``s.  On a session's first run ``restore``
copies valid URL values into ``st.session_state`` (widgets are keyed by the field
name); a malformed or out-of-range value falls back to its default with a
visible warning.  ``publish`` writes the current values back to the URL.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
import re

import streamlit as st

_WARNINGS = "_share_link_warnings"
_DEFAULTS = "_share_link_defaults"
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")     # every ASCII punctuation character


def inert(text: str) -> str:
    """``text`` for a Markdown message, shown as typed: every ASCII punctuation
    character backslash-escaped, so no link, image, HTML, emphasis, LaTeX or
    colour directive in a URL value takes effect."""
    return _PUNCTUATION.sub(r"\\\1", text)


@dataclass(frozen=True)
class Field:
    key: str
    default: object
    kind: type = float                   # float, int, str or bool
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None

    def parse(self, raw: str):
        """The value a URL string stands for, or ``ValueError`` saying why not."""
        if self.kind is bool:
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if self.kind is str:
            value = raw
        else:
            try:
                value = float(raw)
            except ValueError:
                raise ValueError("not a number") from None
            if not math.isfinite(value):
                raise ValueError("not a finite number")
            if self.kind is int:
                if value != int(value):
                    raise ValueError("not a whole number")
                value = int(value)
            if self.low is not None and value < self.low:
                raise ValueError(f"below the minimum {self.low:g}")
            if self.high is not None and value > self.high:
                raise ValueError(f"above the maximum {self.high:g}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"not one of {', '.join(map(str, self.choices))}")
        return value

    def format(self, value) -> str:
        if self.kind is bool:
            return "true" if value else "false"
        if self.kind is float:                   # short, but exact: a link gives back the value
            text = f"{float(value):.10g}"
            return text if float(text) == float(value) else repr(float(value))
        return str(value)


def restore(fields: list[Field]) -> None:
    """First run of a session: take inputs from the URL (or defaults) into session state."""
    warnings = st.session_state.setdefault(_WARNINGS, [])
    st.session_state[_DEFAULTS] = {field.key: field.default for field in fields}
    for field in fields:
        if field.key in st.session_state:
            continue
        raw = st.query_params.get(field.key)
        value = field.default
        if raw is not None:
            try:
                value = field.parse(raw)
            except ValueError as err:
                shown = inert(repr(raw[:40]))         # Markdown: shown as typed
                warnings.append(f"Link parameter `{field.key}` = {shown} ignored ({err}); "
                                f"using the default {field.format(field.default)}.")
        st.session_state[field.key] = value


def default(key: str, fallback=None):
    """The declared default of the page's input ``key`` (``fallback`` if none)."""
    return st.session_state.get(_DEFAULTS, {}).get(key, fallback)


def show_warnings() -> None:
    for text in st.session_state.get(_WARNINGS, []):
        st.warning(text, icon=":material/link_off:")


def publish(fields: list[Field]) -> None:
    """Mirror the current inputs into the URL (only when they changed)."""
    params = {f.key: f.format(st.session_state[f.key]) for f in fields if f.key in st.session_state}
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
