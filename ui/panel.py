"""The what-if panel every page shares: results as one table, a row of actions.

A slider move re-draws only the page's what-if fragment (``st.fragment``), so
what the fragment draws is what a user waits for.  These helpers keep it to a
few elements: many numbers in one markdown table instead of one element per
number, several buttons in one horizontal row.
"""
from __future__ import annotations

from pathlib import Path

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


ROOT = Path(__file__).resolve().parent.parent


def formulas_panel(formulas: list[tuple[str, str]], errata: list[str], model: str,
                   heading: str = "Errata found in the paper") -> None:
    """The formulas view: each (LaTeX, what it is) pair, the paper's errata, then the
    model's document (``docs/models/<model>.md``: derivations, errata, how the exact
    methods are checked) in an expander."""
    for tex, what in formulas:
        st.latex(tex)
        st.caption(what)
    st.markdown(f"**{heading}**\n" + "\n".join(f"- {e}" for e in errata))
    path = model_doc(model)
    with st.expander(f"Derivations, errata and checks ({path})"):
        st.markdown(_doc_text(path))


def model_doc(model: str) -> str:
    """The repository path of a model's document."""
    return f"docs/models/{model}.md"


@memo(16)
def _doc_text(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")
