"""Matplotlib figures as HTML, so widgets can show plots that survive in saved notebooks.

A widget that draws into an ``ipywidgets.HTML`` holding a PNG data URI works the same in
JupyterLab, Colab (ipywidgets 7) and the static book page, where the saved widget state shows
the default view. It also makes callbacks testable: the new plot is a new string.

Plots are drawn on white. In a dark theme (JupyterLab's dark themes, the book's dark mode, VS
Code's dark themes) a style rule inverts their lightness and turns the hues back, so a plot is a
dark panel with the same colours instead of a glaring white block; where the style cannot apply
(an untrusted notebook's saved output), the plot stays white and readable.

A lesson's own matplotlib figures go through :func:`show_figure` for the same reason: shown by
the inline backend they are plain PNG outputs, which no style rule reaches, so they stayed white
in a dark theme.
"""

import base64
import io

import ipywidgets as widgets
from IPython.display import display
from matplotlib.figure import Figure

FIGURE_CLASS = "course-figure"
# invert(0.9) maps white to a dark grey and black to a light grey; hue-rotate(180deg) turns the
# inverted hues back (red stays red, green stays green), so legends and prose still agree.
DARK_THEME_STYLE = (
    "<style>"
    f'body[data-jp-theme-light="false"] img.{FIGURE_CLASS},'
    f'html[data-theme="dark"] img.{FIGURE_CLASS},'
    f"body.vscode-dark img.{FIGURE_CLASS}"
    "{filter:invert(0.9) hue-rotate(180deg)}"
    "</style>"
)


def new_figure(width: float = 6.0, height: float = 3.5) -> Figure:
    """A figure not registered with pyplot: it never leaks into cell outputs and needs no backend."""
    return Figure(figsize=(width, height), layout="constrained")


def figure_to_html(fig: Figure, alt: str, dpi: int = 100) -> str:
    """Render ``fig`` to an ``<img>`` tag with the PNG inlined; ``alt`` describes it for readers."""
    buffer = io.BytesIO()
    # No metadata: the PNG bytes then depend on the picture only (regenerating is byte-identical).
    fig.savefig(buffer, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    escaped_alt = alt.replace("&", "&amp;").replace('"', "&quot;")
    return (
        f'<img src="data:image/png;base64,{encoded}" class="{FIGURE_CLASS}" alt="{escaped_alt}" '
        f'style="max-width:100%;height:auto"/>{DARK_THEME_STYLE}'
    )


def figure_view(fig: Figure, alt: str) -> widgets.HTML:
    """``fig`` as the widget :func:`show_figure` displays; closes it, so pyplot shows it no more."""
    from matplotlib import pyplot as plt  # here, so that importing the widgets picks no backend

    view = widgets.HTML(value=figure_to_html(fig, alt))
    plt.close(fig)
    return view


def show_figure(fig: Figure, alt: str) -> None:
    """Show a lesson's figure like every course plot: white in a light theme, dark in a dark one.

    Use it instead of ``plt.show()``; ``alt`` describes the figure for readers who cannot see it.
    """
    display(figure_view(fig, alt))
