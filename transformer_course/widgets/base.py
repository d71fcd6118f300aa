"""The display base every course widget shares: each keeps its layout in ``view`` and shows it.

Keeping the controls on the instance, rather than returning a bare box, lets unit tests change a
control and read what the widget shows. Displaying an instance (the last line of a cell, or
``display(widget)``) shows ``view``.
"""

import ipywidgets as widgets
from IPython.display import display


class ShowsView:
    """Base of the course's widgets: displaying an instance shows its ``view`` widget."""

    view: widgets.Widget

    def _ipython_display_(self) -> None:
        display(self.view)
