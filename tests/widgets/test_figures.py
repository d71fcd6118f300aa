"""Figures rendered to inline PNG for widgets."""

import base64

from matplotlib import pyplot as plt

from transformer_course.widgets.figures import FIGURE_CLASS, figure_to_html, figure_view, new_figure


def test_figure_becomes_an_inline_png_with_escaped_alt_text():
    fig = new_figure(2, 2)
    fig.add_subplot().plot([0, 1], [1, 0])
    html = figure_to_html(fig, alt='a "quoted" & plot')
    assert 'alt="a &quot;quoted&quot; &amp; plot"' in html
    payload = html.split("base64,")[1].split('"')[0]
    assert base64.b64decode(payload).startswith(b"\x89PNG")


def test_a_lesson_figure_is_shown_like_the_widget_plots_and_leaves_pyplot():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [1, 0])
    view = figure_view(fig, alt="a line")
    assert f'class="{FIGURE_CLASS}"' in view.value and 'data-jp-theme-light="false"' in view.value
    assert fig.number not in plt.get_fignums()  # the inline backend will not show it a second time
