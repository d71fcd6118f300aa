"""Matplotlib figures as HTML, so widgets can show plots that survive in saved notebooks.

A widget that draws into an ``ipywidgets.HTML`` holding a PNG data URI works the same in
JupyterLab, Colab (ipywidgets 7) and the static book page, where the saved widget state shows
the default view. It also makes callbacks testable: the new plot is a new string.
"""

import base64
import io

from matplotlib.figure import Figure


def new_figure(width: float = 6.0, height: float = 3.5) -> Figure:
    """A figure not registered with pyplot: it never leaks into cell outputs and needs no backend."""
    return Figure(figsize=(width, height), layout="constrained")


def figure_to_html(fig: Figure, alt: str, dpi: int = 100) -> str:
    """Render ``fig`` to an ``<img>`` tag with the PNG inlined; ``alt`` describes it for readers."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    escaped_alt = alt.replace("&", "&amp;").replace('"', "&quot;")
    return (
        f'<img src="data:image/png;base64,{encoded}" alt="{escaped_alt}" style="max-width:100%;height:auto"/>'
    )
