"""Inputs from outside, fuzzed: uploads, share links, exports and HTML.

* Parsers: every upload parser (batch profile, token counts for both LLM pages,
  load trace as rates or timestamps, the profile table editor) returns a valid
  object or raises ``ValueError`` naming the problem, never anything else, for
  a named table of bad files and for hypothesis-generated ones.
* Exports: CSV cells that a spreadsheet would evaluate are neutralised.
* Pages (AppTest): every share-link field of every page given garbage; every
  upload widget given bad files: a message, the previous scenario kept.
* HTML: no page or kit module renders user text as raw HTML; reports escape it.
"""
from __future__ import annotations

import ast
import csv
import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tests.counting import counted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests import pagetest
from tests.input_cases import (BIG, CASES, FORMULA, GARBAGE_KINDS, IMG, MD_IMAGE, SCRIPT, UPLOADS,
                               editor_tables, garbage, markdown_escaped, uploads_for,
                               validated_editor_profile)
from tests.pagetest import charts
from app_pages.batching import data as batching_data
from ui import share
from ui.export import figure_csv, figure_html, report_html
from ui.uploads import MAX_UPLOAD_BYTES, decode_text, neutralise_cell, to_safe_csv

ROOT = pagetest.ROOT
PAGES = ("batching", "token_limit", "llm_batching", "llm_serving", "pipeline",
         "sla", "planner")
FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ================================================================ parser level

def outcome(upload, data) -> str | None:
    """Parse; a refusal must be a ValueError with a message, an acceptance a
    valid object.  Returns the message (None when accepted)."""
    try:
        parsed = upload.parse(data)
    except ValueError as err:
        message = str(err)
        assert message.strip(), "a refusal says why"
        return message
    upload.check(parsed)
    return None


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", UPLOADS)
def test_named_bad_file(name, case):
    upload, bad = UPLOADS[name], CASES[case]
    message = outcome(upload, bad.make(upload.good))
    if bad.valid is True:
        assert message is None, message
    if bad.valid is False:
        assert message is not None, f"{case} accepted by the {name} parser"
    if message is not None:
        assert re.search(bad.says.format(where=upload.where), message), message


@pytest.mark.parametrize("name", UPLOADS)
def test_valid_tables_parse(name):
    upload = UPLOADS[name]
    assert outcome(upload, upload.good) is None
    assert outcome(upload, upload.good.encode()) is None


@pytest.mark.parametrize("name", UPLOADS)
def test_parser_fuzz(name):
    upload = UPLOADS[name]

    @FUZZ
    @given(uploads_for(upload))
    def run(data):
        outcome(upload, data)

    run()


@pytest.mark.parametrize("name", UPLOADS)
def test_50_mb_is_refused_by_the_size_cap_before_parsing(name, monkeypatch):
    """Refused from its length alone, counted by a profile hook: not parsed, no method
    of the 50 MB data called (no decode, strip or split: not one pass over it), and a
    handful of calls in all."""
    upload = UPLOADS[name]
    data = CASES["50 MB"].make(upload.good)
    assert len(data) >= 50_000_000

    def not_parsed(*args, **kwargs):
        raise AssertionError("a file over the size cap was parsed")

    monkeypatch.setattr(pd, "read_csv", not_parsed)
    monkeypatch.setattr(csv, "reader", not_parsed)
    for big in (data, data.decode()):                   # an upload, a paste
        refused, calls, on_big = counted(upload.parse, big, big_bytes=MAX_UPLOAD_BYTES + 1)
        assert isinstance(refused, ValueError), refused
        assert refused is not None and "MB" in str(refused), refused
        assert on_big == [], on_big
        assert calls <= 100, calls


def test_size_cap_counts_bytes_and_text_alike():
    assert decode_text(b"a" * MAX_UPLOAD_BYTES) == "a" * MAX_UPLOAD_BYTES
    with pytest.raises(ValueError, match="2.0 MB"):
        decode_text(b"a" * (MAX_UPLOAD_BYTES + 1))
    with pytest.raises(ValueError, match="2.0 MB"):
        decode_text("a" * (MAX_UPLOAD_BYTES + 1))
    with pytest.raises(ValueError, match="not UTF-8"):
        decode_text("batch_size\n1\n".encode("utf-16"))


def test_pasted_path_is_read_as_text_not_opened(tmp_path):
    """A pasted file path must not make the server read that file."""
    secret = tmp_path / "counts.csv"
    secret.write_text("7\n8\n9\n")
    upload = UPLOADS["LLM batching token counts"]
    for text in (str(secret), "/etc/passwd", "/etc/hostname"):
        message = outcome(upload, text)          # opened, the first would parse (7, 8, 9)
        assert message is not None and ("empty" in message or "got 0" in message), message
        assert "root:" not in message


EDITOR_CASES = {
    "NaN cell": ({"throughput_per_s": [476.0, np.nan, 1500.0]}, r"'throughput_per_s'.*empty"),
    "inf cell": ({"throughput_per_s": [476.0, np.inf, 1500.0]}, r"throughput_per_s.*finite"),
    "negative cell": ({"throughput_per_s": [476.0, -880.0, 1500.0]},
                      r"throughput_per_s.*positive"),
    "zero batch": ({"batch_size": [0.0, 2.0, 4.0]}, r"batch_size.*positive"),
    "fractional batch": ({"batch_size": [1.0, 2.5, 4.0]}, r"batch_size.*whole"),
    "one row": ({"batch_size": [1.0], "throughput_per_s": [476.0], "power_w": [120.0]},
                r"batch_size.*2 distinct"),
    "empty table": ({"batch_size": [], "throughput_per_s": [], "power_w": []},
                    r"batch_size"),
    "some power missing": ({"power_w": [120.0, np.nan, 130.0]}, r"'power_w'.*empty"),
    "negative power": ({"power_w": [120.0, -1.0, 130.0]}, r"power_w.*positive"),
    "throughput falls (slope < 0)": ({"throughput_per_s": [100.0, 1000.0, 4000.0]},
                                     r"'throughput_per_s'.*grow"),
    "negative overhead (τ0 < 0)": ({"throughput_per_s": [2000.0, 1000.0, 1100.0]},
                                   r"'throughput_per_s'.*τ0"),
    "energy falls (β < 0)": ({"power_w": [1000.0, 1.0, 1.0]}, r"'power_w'"),
    "extreme values": ({"throughput_per_s": [1e300, 1e-300, 1.0]}, r"'throughput_per_s'"),
}


@pytest.mark.parametrize("case", EDITOR_CASES)
def test_profile_editor_named_bad_tables(case):
    """The custom-profile table editor (app_pages/batching/profile_input.py) on the usual mistakes."""
    changes, says = EDITOR_CASES[case]
    table = {"batch_size": [1.0, 2.0, 4.0], "throughput_per_s": [476.0, 880.0, 1500.0],
             "power_w": [120.0, 109.0, 130.0]} | changes
    with pytest.raises(ValueError, match=says):
        validated_editor_profile(pd.DataFrame(table, dtype=float))


@FUZZ
@given(editor_tables())
def test_profile_editor_fuzz(frame):
    try:
        profile = validated_editor_profile(frame)
    except ValueError as err:
        assert re.search(r"batch_size|throughput_per_s|power_w", str(err)), err
        return
    fit = batching_data.profile_fit(profile.batch_size, profile.throughput_per_s,
                                    profile.power_w)
    assert fit.alpha_ms > 0 and fit.tau0_ms >= 0          # what every page model needs
    assert fit.beta_j is None or (fit.beta_j > 0 and fit.c0_j >= 0)


# ================================================================ export level

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
EVIL = [FORMULA, "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "=HYPERLINK(\"http://x\")",
        "-", "=", SCRIPT, "plain", "", "a=b", " =1"]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _assert_inert(cell: str) -> None:
    assert not cell.startswith(TRIGGERS), f"a spreadsheet would evaluate {cell!r}"


def test_to_safe_csv_neutralises_formulas_and_keeps_numbers():
    frame = pd.DataFrame({"name": EVIL, "x": np.linspace(-3.5, 2.0, len(EVIL)),
                          "n": np.arange(-7, len(EVIL) - 7), FORMULA: ["-1"] * len(EVIL)})
    rows = _cells(to_safe_csv(frame).decode("utf-8"))
    header, body = rows[0], rows[1:]
    assert header[:3] == ["name", "x", "n"] and header[3] == "'" + FORMULA
    for raw, row in zip(EVIL, body):
        _assert_inert(row[0])
        assert row[0] == ("'" + raw if raw.startswith(TRIGGERS) else raw)
        _assert_inert(row[3])
    assert [float(r[1]) for r in body] == list(frame["x"])      # numbers stay numbers
    assert [int(r[2]) for r in body] == list(frame["n"])
    assert body[0][1] == "-3.5"                                 # unquoted, unprefixed


def test_figure_csv_neutralises_trace_names_and_category_labels():
    fig = go.Figure([go.Scatter(x=["=1+1", "-2", "@x", "ok"], y=[-1.5, 2.0, -3e-5, 4.0],
                                name=FORMULA),
                     go.Scatter(x=[-1.0, 0.0, 1.0], y=[-2.0, 0.0, 2.0], name="+1 tokens",
                                error_y=dict(array=[0.1, 0.2, 0.3]))])
    rows = _cells(figure_csv(fig).decode("utf-8"))
    # wide (issue 14): x, then one column per series (named after it) and its CI
    assert rows[0] == ["x", "'" + FORMULA, "'+1 tokens", "'+1 tokens ±95% CI"]
    for row in rows:
        for cell in row:
            if not _number(cell):
                _assert_inert(cell)
    assert [r[0] for r in rows[1:5]] == ["'=1+1", "'-2", "'@x", "ok"]
    assert [float(r[1]) for r in rows[1:5]] == [-1.5, 2.0, -3e-5, 4.0]
    assert [float(r[0]) for r in rows[5:]] == [-1.0, 0.0, 1.0]   # numeric x stays numeric
    assert [float(r[2]) for r in rows[5:]] == [-2.0, 0.0, 2.0]
    assert [float(r[3]) for r in rows[5:]] == [0.1, 0.2, 0.3]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@FUZZ
@given(st.lists(st.tuples(st.one_of(st.sampled_from(EVIL),
                                    st.text(st.characters(blacklist_categories=("Cs",)),
                                            max_size=12)),
                          st.floats(allow_nan=False, allow_infinity=False)),
                min_size=1, max_size=10))
def test_to_safe_csv_fuzz(rows):
    frame = pd.DataFrame(rows, columns=["text", "value"])
    body = _cells(to_safe_csv(frame).decode("utf-8"))[1:]
    assert len(body) == len(rows)
    for (text, value), (cell, number) in zip(rows, body):
        _assert_inert(cell)
        assert cell == ("'" + text if text.startswith(TRIGGERS) else text)
        assert float(number) == value                      # exact round trip, not prefixed


def test_neutralise_cell_leaves_non_text_alone():
    for value in (-1, -1.5, 0, None, True, np.float64(-2.0)):
        assert neutralise_cell(value) is value


# ================================================================ share links

FIELD_SAMPLES = [share.Field("f", 0.5, float, 0.01, 0.99), share.Field("i", 64, int, 1, 1024),
                 share.Field("u", 3, int), share.Field("x", 2.0, float),
                 share.Field("flag", False, bool),
                 share.Field("view", "Latency", str, choices=("Latency", "Formulas")),
                 share.Field("free", "a", str)]


@FUZZ
@given(st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
                 st.floats().map(repr), st.integers().map(str),
                 st.sampled_from(["inf", "-inf", "nan", "1e400", "-1e400", "9" * 5000, "1_0",
                                  " 5 ", "0x10", "True", "", SCRIPT, IMG, MD_IMAGE])))
def test_field_parse_returns_a_valid_value_or_value_error(raw):
    for field in FIELD_SAMPLES:
        try:
            value = field.parse(raw)
        except ValueError as err:
            assert str(err)
            continue
        assert type(value) is field.kind
        if field.kind in (int, float):
            assert math.isfinite(value)
            assert field.low is None or value >= field.low
            assert field.high is None or value <= field.high
        if field.choices is not None:
            assert value in field.choices
        assert field.parse(field.format(value)) == value         # a share link gives it back


@FUZZ
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_inert_escapes_every_markdown_character_and_nothing_else(text):
    shown = share.inert(text)
    assert markdown_escaped(shown)
    assert re.sub(r"\\(.)", r"\1", shown, flags=re.S) == text


def _spy_fields():
    """Record the FIELDS list each page passes to ``share.restore``."""
    seen = []
    real = share.restore

    def spy(fields):
        seen.append(list(fields))
        return real(fields)
    return seen, spy


@pytest.fixture(scope="module")
def page_fields():
    """Each page's declared share-link fields, read by running the page once (this
    also warms the caches the page tests below share)."""
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        seen, spy = _spy_fields()
        mp.setattr(share, "restore", spy)
        for page in PAGES:
            pagetest.open_page(pagetest.script(page))
            out[page] = seen[-1]
    return out


# Str fields the URL can set to anything: the page must check the value itself.
FREE_TEXT_FIELDS = {("batching", "preset"), ("llm_batching", "preset")}


def test_every_declared_field_refuses_every_kind_of_garbage(page_fields):
    for page, fields in page_fields.items():
        assert fields, page
        for field in fields:
            if (page, field.key) in FREE_TEXT_FIELDS and field.choices is None:
                continue
            for kind in GARBAGE_KINDS:
                raw = garbage(field, kind)
                with pytest.raises(ValueError):
                    field.parse(raw)
            assert field.parse(field.format(field.default)) == field.default


def _param(at, key):
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def _html_bodies(at) -> list[str]:
    """Text of every element the browser would render as raw HTML."""
    out = []
    for node in (*at.main, *at.sidebar):                  # every element, nested ones too
        proto = getattr(node, "proto", None)
        if node.type == "html" or getattr(proto, "allow_html", False):
            out.append(getattr(proto, "body", ""))
    return out


def test_the_html_check_sees_raw_html_elements():
    at = AppTest.from_string("import streamlit as st\nst.html('<b>one</b>')\n"
                             "st.sidebar.markdown('<i>two</i>', unsafe_allow_html=True)\n"
                             "st.markdown('<u>three</u>')\n").run()
    assert _html_bodies(at) == ["<b>one</b>", "<i>two</i>"]


def _assert_no_raw_html(at, *payloads):
    for body in _html_bodies(at):
        for payload in payloads:
            assert payload not in body, f"user text rendered as HTML: {body[:200]!r}"


LINK_RUNS = 3      # field i gets kinds i, i + 2, i + 4 (mod 7): every kind on every page


@pytest.mark.parametrize("run", range(LINK_RUNS))
@pytest.mark.parametrize("page", PAGES)
def test_garbage_link_values_fall_back_with_a_warning(page, run, page_fields):
    """Every field of the page gets a garbage value at once (each run a different
    kind per field; ``test_every_declared_field_refuses_every_kind_of_garbage``
    tries every kind on every field)."""
    fields = page_fields[page]
    kinds = [GARBAGE_KINDS[(i + 2 * run) % len(GARBAGE_KINDS)] for i in range(len(fields))]
    if len(fields) >= len(GARBAGE_KINDS):
        assert set(kinds) == set(GARBAGE_KINDS)
    query = {f.key: garbage(f, kind) for f, kind in zip(fields, kinds)}
    at = pagetest.open_page(pagetest.script(page), query)     # fails on any exception
    warnings = [w.value for w in at.warning]
    for field in fields:
        assert at.session_state[field.key] == field.default, field.key
        assert _param(at, field.key) == field.format(field.default), field.key
        named = [w for w in warnings if w.startswith(f"Link parameter `{field.key}` = ")]
        assert named, f"no warning names {field.key}: {[w[:70] for w in warnings]}"
        shown = named[0].split(" = ", 1)[1].split(" ignored ")[0]
        assert markdown_escaped(shown), named[0]
    _assert_no_raw_html(at, SCRIPT, IMG, MD_IMAGE)


def test_query_string_over_streamlits_limit_gives_the_defaults(page_fields):
    """Streamlit drops a whole query string over 512 KB (and logs why): the page
    runs on its defaults."""
    fields = page_fields["pipeline"]
    at = pagetest.open_page(pagetest.script("pipeline"), {f.key: "9" * 100_000 for f in fields})
    assert charts(at)
    for field in fields:
        assert at.session_state[field.key] == field.default, field.key


def test_llm_batching_unknown_preset_link_is_warned():
    at = pagetest.open_page(pagetest.script("llm_batching"), {"preset": SCRIPT})
    assert at.session_state["preset"] == "a100_llama2_7b"
    assert any(w.value.startswith("Link parameter `preset`") for w in at.warning)


# ================================================================ uploads on pages

UPLOAD_PAGES = {
    "batching": ({"preset": "custom"}, "gpu_profile_upload", "gpu_profile_paste",
                     "batch profile", "Profile not used"),
    "token_limit": ({"law": "empirical", "simulate": "false"}, "tokens_upload",
                         "tokens_paste", "token counts", "Token counts not used"),
    "llm_batching": ({"law": "empirical"}, "tokens_file", "tokens_paste",
                     "LLM batching token counts", "Token counts not used"),
    "sla": ({"trace": "custom", "simulate": "false", "view": "Trace & cost"},
                        "sla_trace_upload", "sla_trace_paste", "trace rates", "Trace not used"),
}
PASTED = ("NaN cell", "formula cell", "script cell", "header only")


def _refusal(at, prefix: str, case: str) -> str:
    found = [e.value for e in at.error if e.value.startswith(prefix)]
    assert found, f"{case}: no '{prefix}' message; errors: {[e.value for e in at.error]}"
    return found[0]


@pytest.mark.parametrize("page", UPLOAD_PAGES)
def test_bad_uploads_show_an_error_and_keep_the_previous_scenario(page):
    query, uploader, paste, parser, prefix = UPLOAD_PAGES[page]
    upload = UPLOADS[parser]
    at = pagetest.open_page(pagetest.script(page), query)
    at.file_uploader(key=uploader).set_value((f"{IMG}.csv", upload.good.encode(), "text/csv"))
    at.run()
    assert not at.exception and not [e for e in at.error if e.value.startswith(prefix)]
    before = charts(at)
    assert before
    for case, bad in CASES.items():
        if bad.valid is not False:
            continue
        at.file_uploader(key=uploader).set_value((f"{case}.csv", bad.make(upload.good),
                                                  "text/csv"))
        at.run()
        assert not at.exception, (case, at.exception)
        message = _refusal(at, prefix, case)
        assert re.search(bad.says.format(where=upload.where), message), (case, message)
        assert charts(at) == before, f"{case}: the previous scenario is not drawn"
        _assert_no_raw_html(at, SCRIPT, IMG, FORMULA)
    case = "HTML column name"                 # refused or accepted: never raw HTML
    at.file_uploader(key=uploader).set_value((f"{SCRIPT}.csv", CASES[case].make(upload.good),
                                              "text/csv"))
    at.run()
    assert not at.exception, (case, at.exception)
    if any(e.value.startswith(prefix) for e in at.error):
        assert charts(at) == before
    else:
        before = charts(at)                   # accepted: the new scenario is the last valid
    _assert_no_raw_html(at, SCRIPT, IMG)
    at.file_uploader(key=uploader).set_value(None)
    for case in PASTED:
        text = CASES[case].make(upload.good).decode()
        at.text_area(key=paste).input(text).run()
        assert not at.exception, (case, at.exception)
        message = _refusal(at, prefix, case)
        assert re.search(CASES[case].says.format(where=upload.where), message), (case, message)
        assert charts(at) == before, f"pasted {case}: the previous scenario is not drawn"
        assert at.text_area(key=paste).value == text          # the user's text kept


@pytest.mark.parametrize("page", UPLOAD_PAGES)
def test_pasting_50_mb_keeps_the_page_running(page):
    """A paste box without ``max_chars`` would send 50 MB to the server, where Streamlit
    refuses the widget state (over 25 MB) with an exception instead of the page."""
    query, _, paste, _, _ = UPLOAD_PAGES[page]
    at = pagetest.open_page(pagetest.script(page), query)
    assert 0 < at.text_area(key=paste).max_chars <= MAX_UPLOAD_BYTES
    before = charts(at)
    at.text_area(key=paste).input("1," * (BIG // 2)).run()   # AppTest obeys max_chars
    assert not at.exception
    assert charts(at) == before


def test_llm_batching_empty_upload_is_reported():
    query, uploader, _, parser, prefix = UPLOAD_PAGES["llm_batching"]
    at = pagetest.open_page(pagetest.script("llm_batching"), query)
    at.file_uploader(key=uploader).set_value(("empty.csv", b"", "text/csv"))
    at.run()
    assert not at.exception
    assert "empty" in _refusal(at, prefix, "empty file")


def test_bad_profile_table_edits_show_an_error_and_keep_the_previous_profile():
    at = pagetest.open_page(pagetest.script("batching"), {"preset": "custom"})
    before = charts(at)
    assert before and len(at.data_editor) == 1
    b = at.data_editor[0].value["batch_size"]
    falling = {i: {"throughput_per_s": 1000.0 * v * v} for i, v in enumerate(b)}  # τ[b] = 1/b
    for edits, says in [({0: {"throughput_per_s": -5.0}}, "positive"),
                        ({1: {"batch_size": None}}, "empty cells"),
                        (falling, "must grow with the batch size")]:
        at.session_state["gpu_profile_table"] = {"edited_rows": edits, "added_rows": [],
                                                 "deleted_rows": []}
        at.run()
        assert not at.exception, at.exception
        assert re.search(says, _refusal(at, "Profile not used", str(edits)))
        assert charts(at) == before


def _page_with_eager_report(page):
    """The page, with the report's deferred download generated at once into
    session state (AppTest does not click download buttons)."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    real, real_st = DeltaGenerator.download_button, st.download_button

    def eager(self, label, data, *args, **kwargs):
        if callable(data) and label.startswith("Download report"):
            st.session_state["_report_html"] = data = data()
        return real(self, label, data, *args, **kwargs)

    DeltaGenerator.download_button = eager
    st.download_button = lambda *a, **k: eager(st._main, *a, **k)
    try:
        exec(compile(open(page, encoding="utf-8").read(), page, "exec"), {"__name__": "__main__"})
    finally:
        DeltaGenerator.download_button, st.download_button = real, real_st


def test_uploaded_file_name_is_escaped_in_the_report():
    at = AppTest.from_function(_page_with_eager_report,
                               args=(str(ROOT / pagetest.script("sla")),),
                               default_timeout=120)
    at.query_params["trace"] = "custom"
    at.query_params["simulate"] = "false"
    at.run()
    name = f"{SCRIPT}{IMG}.csv"
    at.file_uploader(key="sla_trace_upload").set_value(
        (name, UPLOADS["trace rates"].good.encode(), "text/csv"))
    at.run()
    assert not at.exception and not at.error, at.exception
    report = at.session_state["_report_html"]
    assert SCRIPT not in report and IMG not in report
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;.csv" in report
    _assert_no_raw_html(at, SCRIPT, IMG)


# ================================================================ no raw HTML

# Calls that render raw HTML in the browser.  None are used; a static use (text
# written in the source, no user input) would be listed here with why it is safe.
SAFE_HTML_USES: dict[tuple[str, int], str] = {}


def _raw_html_uses(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
            if any("streamlit.components" in n or n == "components" for n in names):
                found.append((node.lineno, "imports streamlit components"))
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg in ("unsafe_allow_html", "unsafe_allow_javascript") and not (
                    isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append((node.lineno, f"{kw.arg}="))
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("html", "iframe") and (
                "components" in ast.unparse(func.value) or ast.unparse(func.value) == "st"):
            found.append((node.lineno, ast.unparse(func)))
    return found


def test_no_page_or_kit_module_renders_raw_html():
    files = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")),
             *sorted((ROOT / "ui").glob("*.py"))]
    assert len(files) > 10
    uses = {(str(p.relative_to(ROOT)), line): what for p in files
            for line, what in _raw_html_uses(p)}
    assert set(uses) <= set(SAFE_HTML_USES), uses


def test_the_scan_finds_raw_html_uses(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import streamlit as st\nimport streamlit.components.v1 as components\n"
                     "st.markdown(x, unsafe_allow_html=True)\nst.html(x)\n"
                     "components.html(x)\nst.markdown(x, unsafe_allow_html=False)\n")
    assert [line for line, _ in _raw_html_uses(probe)] == [2, 3, 4, 5]


def test_report_and_standalone_chart_escape_user_text():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="</script>" + SCRIPT))
    fig.update_layout(title=IMG)
    report = report_html(SCRIPT, {SCRIPT: IMG, "profile": f"Custom {SCRIPT}"},
                         [(SCRIPT, fig, IMG)], [f"E[W] {SCRIPT}"], [IMG])
    page = figure_html(fig, SCRIPT)
    for html in (report, page):
        assert SCRIPT not in html and IMG not in html and "</script><script>" not in html
    assert report.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5
    assert "&lt;img src=x onerror=alert(1)&gt;" in report
