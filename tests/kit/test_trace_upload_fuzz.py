"""Request traces given to the upload parsers, fuzzed: the token-law input's
(``ui.token_counts.read_token_sample``) and the SLA page's (``parse_trace_csv``) read
the Azure LLM trace CSV, a plain CSV trace and JSON lines through
``engine.measured.read_trace``; each returns a valid object or a ``ValueError`` with a
message, for the shared table of bad files and for hypothesis-generated ones."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.input_cases import CASES, Upload, check_counts, check_trace, uploads_for
from app_pages.sla.uploads import parse_trace_csv
from ui.token_counts import read_token_sample

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
AZURE = ("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
         "2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:16:02.1000000,879,28\n"
         "2023-11-16 18:16:11.0102030,91,230\n")                 # made-up rows, real format
PLAIN = "timestamp_s,output_tokens\n0.5,120\n12.25,300\n340,800\n901,1500\n"
SLA_INTERVAL_S = 300.0


def _sample(data):
    return read_token_sample(data).law


def _check_sla(out: dict) -> None:
    check_trace(out)
    assert out["format"] in ("azure_llm_csv", "plain_csv", "mooncake_jsonl", "timestamps",
                             "rates")


UPLOADS = {
    "token law, Azure CSV": Upload("token law, Azure CSV", _sample, AZURE, check_counts,
                                   r"line 3, column 3 \(GeneratedTokens\)"),
    "token law, plain trace": Upload("token law, plain trace", _sample, PLAIN, check_counts,
                                     r"line 3, column 2 \(output_tokens\)"),
    "SLA, Azure CSV": Upload("SLA, Azure CSV", lambda d: parse_trace_csv(d, SLA_INTERVAL_S),
                             AZURE, _check_sla, r"line 3, column 3 \(GeneratedTokens\)"),
}
# What read_trace says where the shared table expects the table parsers' words.
SAYS = {"header only": r"line 1: only a header, no data rows",
        "duplicate column": r"line 2: expected \d columns",        # the rows have one less
        "NUL in a cell": r"line 3: holds a NUL character"}


def outcome(upload: Upload, data) -> str | None:
    try:
        parsed = upload.parse(data)
    except ValueError as err:
        assert str(err).strip(), "a refusal says why"
        return str(err)
    upload.check(parsed)
    return None


@pytest.mark.parametrize("name", UPLOADS)
def test_named_bad_files(name):
    upload = UPLOADS[name]
    assert outcome(upload, upload.good) is None and outcome(upload, upload.good.encode()) is None
    for case, bad in CASES.items():
        message = outcome(upload, bad.make(upload.good))
        if bad.valid is True:
            assert message is None, (case, message)
        if bad.valid is False:
            assert message is not None, f"{case} accepted"
        if message is not None:
            says = bad.says.format(where=upload.where)
            assert re.search(f"{says}|{SAYS[case]}" if case in SAYS else says, message), \
                (case, message)


@pytest.mark.parametrize("name", UPLOADS)
def test_trace_parsers_fuzz(name):
    upload = UPLOADS[name]

    @FUZZ
    @given(uploads_for(upload))
    def run(data):
        outcome(upload, data)

    run()


values = st.one_of(st.integers(-5, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                   st.text(max_size=5), st.none(), st.booleans(), st.lists(st.integers(),
                                                                           max_size=2))


@st.composite
def json_lines(draw) -> str:
    """JSON lines with the Mooncake keys (some missing, odd values), maybe a broken line."""
    keys = ("timestamp", "input_length", "output_length")
    lines = [json.dumps({k: draw(values) for k in keys if draw(st.integers(0, 5))})
             for _ in range(draw(st.integers(0, 6)))]
    if lines and draw(st.booleans()):
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)


@FUZZ
@given(json_lines())
def test_json_lines_fuzz(text):
    for parse, check in ((_sample, check_counts),
                         (lambda d: parse_trace_csv(d, SLA_INTERVAL_S), _check_sla)):
        try:
            check(parse(text))
        except ValueError as err:
            assert str(err).strip()
