"""Figures rendered to inline PNG for widgets."""

import base64

from transformer_course.widgets.figures import figure_to_html, new_figure


def test_figure_becomes_an_inline_png_with_escaped_alt_text():
    fig = new_figure(2, 2)
    fig.add_subplot().plot([0, 1], [1, 0])
    html = figure_to_html(fig, alt='a "quoted" & plot')
    assert 'alt="a &quot;quoted&quot; &amp; plot"' in html
    payload = html.split("base64,")[1].split('"')[0]
    assert base64.b64decode(payload).startswith(b"\x89PNG")
