"""Chart exports: a memoised figure is converted to its dict once, however often drawn."""
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from ui.export import drawn_once


def test_a_drawn_figure_converts_once_and_gives_the_same_spec(monkeypatch):
    x = np.linspace(0.0, 1.0, 200)
    fig = go.Figure(go.Scatter(x=x, y=x ** 2, name="curve"))
    expected = pio.to_json(fig.to_dict(), validate=False)
    original, calls = go.Figure.to_dict, []

    def counting(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(go.Figure, "to_dict", counting)
    drawn = drawn_once(fig)
    specs = [pio.to_json(drawn.to_dict(), validate=False) for _ in range(3)]
    assert drawn_once(drawn) is drawn is fig
    assert len(calls) == 1
    assert specs == [expected] * 3
