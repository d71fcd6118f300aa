"""MyST ``{cite}`` roles as readable text, for pages the book's Sphinx build does not render.

The lesson sources cite ``book/references.bib`` with ``{cite}`key``` (MyST). The book renders them;
nbgrader's formgrader and feedback pages show a notebook's Markdown as it is, where the role
would appear raw. ``render_citations`` turns each role into the author-year text the book shows,
``[Vaswani et al., 2017]``, linked to the work's URL or DOI; an unknown key stays visible as
``[key?]`` so that a typo is noticed rather than hidden.
"""

import re
from functools import cache
from pathlib import Path

from pybtex.database import Entry, parse_file
from pybtex.richtext import Text

from course_build.paths import REPO_ROOT

BIBLIOGRAPHY = REPO_ROOT / "book" / "references.bib"
ROLE = re.compile(r"\{cite(?::(?P<kind>[a-z]+))?\}`(?P<keys>[^`]+)`")


def _plain(latex: str) -> str:
    return Text.from_latex(latex).render_as("text")


def _authors(entry: Entry) -> str:
    names = [_plain(" ".join(person.last_names)) for person in entry.persons.get("author", [])]
    if not names:
        return _plain(entry.fields.get("title", "?"))
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def _link(entry: Entry) -> str | None:
    if "url" in entry.fields:
        return entry.fields["url"]
    if "doi" in entry.fields:
        return f"https://doi.org/{entry.fields['doi']}"
    return None


@cache
def _entries(path: Path) -> dict[str, Entry]:
    return dict(parse_file(str(path), bib_format="bibtex").entries)


def _one(key: str, entries: dict[str, Entry], textual: bool) -> str:
    entry = entries.get(key)
    if entry is None:
        return f"{key}?"
    year = entry.fields.get("year", "n.d.")
    text = f"{_authors(entry)} [{year}]" if textual else f"{_authors(entry)}, {year}"
    link = _link(entry)
    return f"[{text}]({link})" if link else text


def render_citations(markdown: str, bibliography: Path = BIBLIOGRAPHY) -> str:
    """``markdown`` with every ``{cite}`` role replaced by author-year text (``{cite:t}``:
    ``Vaswani et al. [2017]``; any other: ``[Vaswani et al., 2017]``)."""
    if "{cite" not in markdown:
        return markdown
    entries = _entries(bibliography)

    def replace(match: re.Match) -> str:
        keys = [key.strip() for key in match["keys"].split(",") if key.strip()]
        textual = match["kind"] == "t"
        cited = [_one(key, entries, textual) for key in keys]
        return ", ".join(cited) if textual else f"[{'; '.join(cited)}]"

    return ROLE.sub(replace, markdown)
