"""Runs inside the kernel that executes a lesson for regeneration: stable widget model ids.

ipywidgets names each widget model with a random UUID, so every regeneration rewrote every
widget id in the saved notebooks (hundreds of changed lines for no change at all). Here each
model's id is a hash of the source of the cell that created it and its rank among that cell's
widgets: executing the same lesson gives the same ids, and editing one cell changes only the
ids of the widgets that cell creates. ``course_build.authoring.execute`` loads this through an IPython
startup file; students' kernels never do.
"""

import hashlib


def install() -> None:
    """Give every widget created from now on in this kernel a deterministic model id."""
    import ipywidgets
    from IPython import get_ipython

    shell = get_ipython()
    used: set[str] = set()
    original_open = ipywidgets.Widget.open

    def open_with_stable_id(widget: ipywidgets.Widget) -> None:
        if widget.comm is None and getattr(widget, "_model_id", None) is None:
            history = shell.history_manager.input_hist_raw
            cell = history[-1] if history else ""
            rank = 0
            while True:
                model_id = hashlib.sha256(f"{cell}\0{rank}".encode()).hexdigest()[:32]
                if model_id not in used:
                    break
                rank += 1
            used.add(model_id)
            widget._model_id = model_id
        original_open(widget)

    ipywidgets.Widget.open = open_with_stable_id
