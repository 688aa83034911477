"""The shared token-law input (ui.token_law_input): fields, aliases, choices as cache keys."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.core import token_laws
from ui import token_law_input as tli

COUNTS = "output_tokens\n120\n300\n800\n1500\n"


def test_fields_carry_the_url_keys_and_the_aliases():
    assert [f.key for f in tli.FIELDS] == ["law", "log_mean", "log_sd", "uni_low", "uni_high",
                                           "tn_mean", "tn_sd"]
    fields = {f.key: f for f in tli.fields({"log_mean": ("ln_mu",), "uni_low": ("u_lo",)})}
    assert fields["log_mean"].aliases == ("ln_mu",) and fields["uni_low"].aliases == ("u_lo",)
    assert fields["log_sd"].aliases == ()


def test_an_upload_is_keyed_by_content_digest_and_name():
    a = tli.from_counts(COUNTS.encode(), "upload a.csv")
    b = tli.from_counts(COUNTS.encode(), "upload b.csv")
    again = tli.from_counts(COUNTS.encode(), "upload a.csv")
    other = tli.from_counts(COUNTS.replace("1500", "1600").encode(), "upload a.csv")
    assert a != b and hash(a) == hash(again) and a == again and a != other
    assert a.key[1] == b.key[1] != other.key[1]                    # the content digest
    assert a.law.n_samples == 4 and np.allclose(a.law.values, [120, 300, 800, 1500])
    assert tli.law(a.key) is a.law                                  # memoised by its key
    with pytest.raises(ValueError, match="row 3"):
        tli.from_counts("output_tokens\n120\nx\n", "pasted counts")


def test_parametric_choices_build_the_engine_laws():
    c = tli.parametric("lognormal", 7.0, 0.7)
    assert c.key == ("lognormal", 7.0, 0.7) and c.label == "lognormal(7, 0.7)"
    assert c.law.mean() == pytest.approx(token_laws.lognormal(7.0, 0.7).mean(), rel=1e-12)
    assert tli.parametric("uniform", 0, 1000).law.mean() == pytest.approx(500.0)
    assert c.family == "lognormal" and {c: 1}[tli.parametric("lognormal", 7.0, 0.7)] == 1


def _script():
    import streamlit as st
    from ui import share
    from ui import token_law_input as tli
    fields = tli.fields({"log_mean": ("ln_mu",), "log_sd": ("ln_sd",)})
    share.restore(fields)
    choice = tli.draw()
    st.markdown(f"law: {choice.label}")


def test_an_old_link_opens_through_the_aliases():
    at = AppTest.from_function(_script)
    at.query_params.update({"ln_mu": "8", "ln_sd": "1.5"})
    at.run()
    assert not at.exception
    assert at.markdown[-1].value == "law: lognormal(8, 1.5)"
    at.selectbox(key="law").set_value("uniform").run()
    at.number_input(key="uni_low").set_value(900.0).run()
    at.number_input(key="uni_high").set_value(100.0).run()
    assert at.error and at.markdown[-1].value.startswith("law: lognormal")   # bad range


def test_measured_choices_are_the_output_presets_keyed_by_id():
    from engine.presets import token_law_presets
    presets = token_law_presets()
    outputs = sorted(pid for pid, p in presets.items() if p.kind == "output")
    assert sorted(tli.MEASURED) == outputs and set(outputs) <= set(tli.LAWS)
    assert not set(tli.PROMPT_PRESETS) & set(tli.LAWS)          # prompt laws: not outputs
    pid = outputs[0]
    choice = tli.measured(pid)
    assert choice.key == ("measured", pid) and choice == tli.measured(pid)
    expected = presets[pid].law()
    assert np.array_equal(choice.law.values, expected.values)
    assert np.array_equal(choice.law.probs, expected.probs)
    assert choice.label == f"measured: {presets[pid].name}"


def test_a_trace_upload_takes_its_output_tokens():
    text = ('{"timestamp": 0, "output_length": 7}\n{"timestamp": 5, "output_length": 0}\n'
            '{"timestamp": 9, "output_length": 9}\n')
    choice = tli.from_counts(text, "pasted counts")
    assert np.array_equal(choice.law.values, [7, 9]) and choice.law.n_samples == 2
    assert "JSON-lines trace" in choice.detail and "0 generated tokens left out" in choice.detail
    with pytest.raises(ValueError, match="no token-count column"):
        tli.from_counts("timestamp_s,input_tokens\n0,5\n1,7\n", "pasted counts")
