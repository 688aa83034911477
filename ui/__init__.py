"""The page kit: widgets, share links, exports, comparison and pure figure builders.

Everything Streamlit-specific that more than one page needs lives here; model
code stays in ``engine/`` and page scripts stay thin.
"""
