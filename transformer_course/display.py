"""A common base for the course's widgets: each keeps its layout in ``view`` and shows it."""

import ipywidgets as widgets
from IPython.display import display


class ShowsView:
    """Displaying an instance (last line of a cell) shows its ``view`` widget.

    Keeping the widgets on the instance, rather than returning a bare box, lets unit tests
    change a control and read what the widget shows.
    """

    view: widgets.Widget

    def _ipython_display_(self) -> None:
        display(self.view)
