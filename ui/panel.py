"""The what-if panel every page shares: results as one table, a row of actions.

A slider move re-draws only the page's what-if fragment (``st.fragment``), so
what the fragment draws is what a user waits for.  These helpers keep it to a
few elements: many numbers in one markdown table instead of one element per
number, several buttons in one horizontal row.
"""
from __future__ import annotations

import streamlit as st

from ui.memo import memo


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


def memo_figures(page: str, view: str, key: tuple, build, ctx: dict) -> list:
    """``build(view, ctx)`` (a page's (name, figure) pairs) memoised on
    (page, view, key), the 128 most recent kept for every session.  ``key`` must
    hold every input the view's figures depend on: building Plotly figures is
    most of a full rerun, and most reruns change none of a view's inputs.
    Figures are shared, never modified after building."""
    return _figures(page, view, key, build, ctx)


@memo(128)
def _figures(page: str, view: str, key: tuple, _build, _ctx: dict) -> list:
    return _build(view, _ctx)


def formulas_panel(formulas: list[tuple[str, str]], errata: list[str],
                   heading: str = "Errata found in the paper") -> None:
    """The formulas view: each (LaTeX, what it is) pair, then the paper's errata."""
    for tex, what in formulas:
        st.latex(tex)
        st.caption(what)
    st.markdown(f"**{heading}**\n" + "\n".join(f"- {e}" for e in errata))
