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
_RANGES = "_share_widget_ranges"     # per widget key: (min, max, step) drawn last run
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")     # every ASCII punctuation character


def inert(text: str) -> str:
    """``text`` for a Markdown message, shown as typed: every ASCII punctuation
    character backslash-escaped, so no link, image, HTML, emphasis, LaTeX or
    colour directive in a URL value takes effect."""
    return _PUNCTUATION.sub(r"\\\1", text)


@dataclass(frozen=True)
class Field:
    """One input of a page: its URL key (also the widget key), default, kind and bounds.

    ``domain`` is the engine's declaration of the parameter the input stands for
    (``engine.core.domains``): ``low``/``high`` default to its bounds and must lie
    inside it, so a page never offers a value the engine refuses.  ``aliases`` are
    older URL keys of the same input, still accepted when a link is opened;
    ``old_values`` maps a choice's former wording to its present one (a link made before).
    """
    key: str
    default: object
    kind: type = float                   # float, int, str or bool
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    domain: object = None                # an engine Domain, or None
    aliases: tuple = ()
    old_values: tuple = ()               # (former wording, present wording) pairs

    def __post_init__(self):
        if self.domain is None:
            return
        d = self.domain
        if self.low is None and math.isfinite(d.low):
            object.__setattr__(self, "low", d.low)
        if self.high is None and math.isfinite(d.high):
            object.__setattr__(self, "high", d.high)
        for bound in (self.low, self.high, self.default):
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                d.check(bound, self.key)      # ValueError naming the field: a page bug

    def parse(self, raw: str):
        """The value a URL string stands for, or ``ValueError`` saying why not."""
        if self.kind is bool:
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if self.kind is str:
            value = dict(self.old_values).get(raw, raw)
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
        for alias in field.aliases:           # a link made before the key was renamed
            if raw is None:
                raw = st.query_params.get(alias)
        value = field.default
        if raw is not None:
            try:
                value = field.parse(raw)
            except ValueError as err:
                shown = inert(repr(raw[:40]))         # Markdown: shown as typed
                warnings.append(f"Link parameter `{field.key}` = {shown} ignored ({err}); "
                                f"using the default {field.format(field.default)}.")
        st.session_state[field.key] = value


def keep(field: Field) -> None:
    """Keep ``field``'s value through a run that reads it without drawing its widget.

    Streamlit forgets a keyed widget's value at the end of a run that did not draw it; a
    full rerun gets it back from the URL (``restore``), a fragment rerun does not: so a
    fragment that reads an input it does not draw this time (the pipeline's load as a
    fraction while it is given in jobs/s) calls this first, in every run."""
    st.session_state[field.key] = st.session_state.get(field.key, field.default)


def default(key: str, fallback=None):
    """The declared default of the page's input ``key`` (``fallback`` if none)."""
    return st.session_state.get(_DEFAULTS, {}).get(key, fallback)


def show_warnings() -> None:
    for text in st.session_state.get(_WARNINGS, []):
        st.warning(text, icon=":material/link_off:")


def publish(fields: list[Field]) -> None:
    """Mirror the current inputs into the URL (only when they changed)."""
    state, params = st.session_state, {}
    for f in fields:
        try:
            value = state[f.key]
        except KeyError:                     # not drawn (yet) in this session
            continue
        params[f.key] = f.format(value)
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def _bounds(field: Field, kw: dict) -> dict:
    if field.low is not None:
        kw.setdefault("min_value", field.kind(field.low) if field.kind is int else float(field.low))
    if field.high is not None:
        kw.setdefault("max_value", field.kind(field.high) if field.kind is int else float(field.high))
    if field.domain is not None and "help" not in kw and field.domain.description:
        unit = f" ({field.domain.unit})" if field.domain.unit else ""
        kw["help"] = field.domain.description[0].upper() + field.domain.description[1:] + unit + "."
    return kw


def _keep_in_range(field: Field, label: str, kw: dict) -> str:
    """Before the widget is drawn: carry its value across a change of its range.

    Streamlit gives a keyed widget a new identity when its min, max or step change,
    and a new widget starts at its minimum.  So when the range differs from the one
    drawn last run (or the value lies outside it), the current value is written back
    into session state, clamped into the range.  Returns the caption that says so
    when the value had to move ("" otherwise)."""
    low, high = kw.get("min_value"), kw.get("max_value")
    ranges = st.session_state.setdefault(_RANGES, {})
    drawn, ranges[field.key] = ranges.get(field.key), (low, high, kw.get("step"))
    value = st.session_state.get(field.key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    kept = value if low is None else max(value, low)
    kept = kept if high is None else min(kept, high)
    kept = int(kept) if field.kind is int else float(kept)
    if drawn == ranges[field.key] and kept == value:
        return ""                      # same widget, value inside: nothing to carry
    st.session_state[field.key] = kept
    if kept == value:
        return ""
    span = f"{_number(low, '−∞')}–{_number(high, '∞')}"
    new = "the new range" if drawn not in (None, ranges[field.key]) else "the range"
    return f"{label} was {_number(value)}, outside {new} {span}: set to {_number(kept)}."


def _number(value, unbounded: str = "") -> str:
    if value is None:
        return unbounded
    from ui.export import format_number
    return format_number(value, 6)


def _draw(widget, field: Field, label: str, kw: dict):
    kw = _bounds(field, kw)
    moved = _keep_in_range(field, label, kw)
    value = widget(label, key=field.key, **kw)
    if moved:
        st.caption(inert(moved))
    return value


def range_text(low, high) -> str:
    """The values between ``low`` and ``high`` (None: unbounded) in words
    ("from 0.01 to 1,000,000"), or "" when both are None."""
    if low is not None and high is not None:
        return f"from {_number(low)} to {_number(high)}"
    if low is not None:
        return f"at least {_number(low)}"
    return "" if high is None else f"at most {_number(high)}"


def slider(field: Field, label: str, **kw):
    """``st.slider`` for ``field``: its key, and its bounds (typed once, in the Field).

    A value survives a change of the slider's range (``min_value``/``max_value``
    given by the page), clamped into it, with a caption when it had to move."""
    return _draw(st.slider, field, label, kw)


def number_input(field: Field, label: str, **kw):
    """``st.number_input`` for ``field``: its key, and its bounds (typed once, in the Field);
    like ``slider``, its value survives a change of range.

    The bounds are checked here, not in the browser: a browser given min and max keeps
    showing a typed value outside them and never sends it, so the answer stays at the old
    value under a number that says otherwise.  Here the typed value arrives, is clamped
    into the range, and a caption under the input names it, the range and the value used.
    The range is also in the input's help."""
    kw = _bounds(field, kw)
    low, high = kw.pop("min_value", None), kw.pop("max_value", None)
    # Without bounds Streamlit takes the input's type from its step: a whole number
    # stays one (a float step, or none, would send 16.0 back for 16).
    if field.kind is int:
        kw["step"] = int(kw.get("step", 1))
    elif "step" in kw:
        kw["step"] = float(kw["step"])
    span = range_text(low, high)
    if span:
        kw["help"] = (kw.get("help", "").rstrip() + f" Accepted values: {span}.").lstrip()
    st.session_state.setdefault(field.key, field.default)
    moved = _keep_in_range(field, label, {**kw, "min_value": low, "max_value": high})
    value = st.number_input(label, key=field.key, **kw)
    if moved:
        st.caption(inert(moved))
    return value
