"""Citations in lesson notebooks: readable text in Jupyter, a bibliography link in the book.

Lesson sources cite with MyST's ``{cite}`key``` role, which Jupyter shows as raw markup. The
generated notebooks carry ``<cite data-cite=key>(Vaswani et al., 2017)</cite>`` instead: plain
text in JupyterLab and Colab. The book is built from those same notebooks, so this module is also
a small Sphinx extension (``_config.yml`` loads it) that turns the ``<cite>`` back into a
``{cite:p}`` role before MyST parses the page, and the book keeps its links to the bibliography.
"""

import re
from functools import cache
from pathlib import Path
from typing import Any

# Self-contained (no course_build.paths): the student tree ships this module for its book build.
BIBLIOGRAPHY = Path(__file__).resolve().parent.parent / "book" / "references.bib"
CITE_ROLE = re.compile(r"\{cite(?::[pt])?\}`([^`]+)`")
# No quotes around the keys, so the pattern reads the same inside a notebook's JSON text.
CITE_TEXT = re.compile(r"<cite data-cite=([A-Za-z0-9_:,.-]+)>[^<]*</cite>")


class CitationError(ValueError):
    """A cited key is not in book/references.bib."""


@cache
def _entries() -> dict[str, tuple[str, str]]:
    """key -> (author part, year) for every entry of the bibliography."""
    from pybtex.database import parse_file
    from pybtex.richtext import Text

    entries = {}
    for key, entry in parse_file(str(BIBLIOGRAPHY)).entries.items():
        people = entry.persons.get("author", [])
        surnames = [Text.from_latex(" ".join(p.last_names)).render_as("text") for p in people]
        if len(surnames) > 2:
            authors = f"{surnames[0]} et al."
        else:
            authors = " and ".join(surnames) or key
        entries[key] = (authors, entry.fields.get("year", "n.d."))
    return entries


def citation_text(keys: str) -> str:
    """``"vaswani2017attention"`` -> ``"(Vaswani et al., 2017)"``; several keys comma-separated."""
    parts = []
    for key in (k.strip() for k in keys.split(",")):
        if key not in _entries():
            raise CitationError(f"{{cite}}`{key}` is not in book/{BIBLIOGRAPHY.name}")
        authors, year = _entries()[key]
        parts.append(f"{authors}, {year}")
    return f"({'; '.join(parts)})"


def roles_as_text(markdown: str) -> str:
    """Markdown with every ``{cite}`` role written as a readable ``<cite>`` element."""

    def readable(match: re.Match) -> str:
        keys = match.group(1).replace(" ", "")
        return f"<cite data-cite={keys}>{citation_text(keys)}</cite>"

    return CITE_ROLE.sub(readable, markdown)


def text_as_roles(source: str) -> str:
    """The inverse for the book: every ``<cite data-cite=…>`` back to a ``{cite:p}`` role."""
    return CITE_TEXT.sub(lambda match: f"{{cite:p}}`{match.group(1)}`", source)


def _restore_roles(_app: Any, _docname: str, source: list[str]) -> None:
    source[0] = text_as_roles(source[0])


def setup(app: Any) -> dict[str, Any]:
    """Sphinx extension: pages read from notebooks get their citation roles back."""
    app.connect("source-read", _restore_roles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
