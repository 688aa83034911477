"""The what-if panel every page shares: results as one table, a row of actions.

A slider move re-draws only the page's what-if fragment (``st.fragment``), so
what the fragment draws is what a user waits for.  These helpers keep it to a
few elements: many numbers in one markdown table instead of one element per
number, several buttons in one horizontal row.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st


def _cell(text) -> str:
    # A pipe would split the markdown cell; numbers and labels here are ours,
    # but keep the table intact whatever the text.
    return str(text).replace("|", "\\|").replace("\n", " ")


def results_markdown(items: list[tuple[str, str]], per_row: int = 5) -> str:
    """(label, value) pairs as markdown: tables of ``per_row`` columns, labels as
    headers and values below, all in one string (one element when drawn)."""
    tables = []
    for i in range(0, len(items), per_row):
        row = items[i:i + per_row]
        tables.append("\n".join([
            "| " + " | ".join(_cell(k) for k, _ in row) + " |",
            "|" + "---:|" * len(row),
            "| " + " | ".join(f"**{_cell(v)}**" for _, v in row) + " |"]))
    return "\n\n".join(tables)


def results_table(items: list[tuple[str, str]], per_row: int = 5) -> None:
    """Draw (label, value) pairs as one table (one element however many numbers)."""
    st.markdown(results_markdown(items, per_row))


def action_row():
    """A horizontal container for a few buttons (one element for the row)."""
    return st.container(horizontal=True, gap="small")


_FIGURES: OrderedDict = OrderedDict()     # (page, view, key) -> figures, most recent last
_FIGURES_KEPT = 128
_FIGURES_LOCK = threading.Lock()


def memo_figures(page: str, view: str, key: tuple, build, ctx: dict) -> list:
    """``build(view, ctx)`` (a page's (name, figure) pairs) memoised on
    (page, view, key), the 128 most recent kept for every session.  ``key`` must
    hold every input the view's figures depend on: building Plotly figures is
    most of a full rerun, and most reruns change none of a view's inputs.
    Figures are shared, never modified after building.  A plain dictionary
    rather than ``st.cache_resource``, whose argument hashing costs a
    millisecond a call, as much as the rest of a what-if move."""
    k = (page, view, key)
    with _FIGURES_LOCK:
        if k in _FIGURES:
            _FIGURES.move_to_end(k)
            return _FIGURES[k]
    figures = build(view, ctx)
    with _FIGURES_LOCK:
        _FIGURES[k] = figures
        while len(_FIGURES) > _FIGURES_KEPT:
            _FIGURES.popitem(last=False)
    return figures


def formulas_panel(formulas: list[tuple[str, str]], errata: list[str],
                   heading: str = "Errata found in the paper") -> None:
    """The formulas view: each (LaTeX, what it is) pair, then the paper's errata."""
    for tex, what in formulas:
        st.latex(tex)
        st.caption(what)
    st.markdown(f"**{heading}**\n" + "\n".join(f"- {e}" for e in errata))
