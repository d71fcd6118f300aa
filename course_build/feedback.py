"""An nbgrader feedback step that keeps hidden tests hidden.

``ClearHiddenTests`` removes the hidden block from a test cell's source, but when a hidden
assertion fails, IPython's traceback prints the surrounding source lines, hidden ones included.
This preprocessor shortens every test cell's error to its type and message (``AssertionError:
rows of the weights must sum to 1 …``), which is the feedback a student needs.
"""

from nbgrader.preprocessors import NbGraderPreprocessor


class ShortenTestTracebacks(NbGraderPreprocessor):
    """Replace the traceback of each failed test cell with ``ErrorName: message``.

    nbgrader's base class enables the step (a plain nbconvert preprocessor is off by default).
    """

    def preprocess_cell(self, cell, resources, index):
        nbgrader = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and nbgrader.get("grade") and not nbgrader.get("solution"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
