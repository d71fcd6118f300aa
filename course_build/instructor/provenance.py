"""Where every collected file came from: an append-only ledger in the course directory.

Each file taken from an LMS zip adds one JSON line to ``collected/ledger.jsonl``: the lesson, the
student, the zip's name and SHA-256, the entry's name, the LMS submission id, the submission time
and where that time came from, the file's own SHA-256, where the course keeps it and what became
of it (graded, kept aside as older than the graded one, ...). Lines are only ever added, so any
grade can be traced to the exact file it was given for, and every earlier collection stays on
record. The grade sheet names the graded file (``describe_source``).
"""

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Provenance:
    """One collected file: which zip, which entry, which LMS submission, when, and its digest."""

    zip_name: str
    zip_sha256: str
    entry: str
    submission_id: int
    submitted_at: str | None
    time_source: str  # "zip entry time", "instructor (...)", or "unknown"
    sha256: str


def ledger_path(course: Path) -> Path:
    return course / "collected" / "ledger.jsonl"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(2**20):
            digest.update(chunk)
    return digest.hexdigest()


def append_ledger(course: Path, lines: list[dict]) -> None:
    """Add ``lines`` (one dict per collected file) to the ledger; nothing is ever rewritten."""
    path = ledger_path(course)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")


def read_ledger(course: Path) -> list[dict]:
    """Every line of the ledger, oldest first (none before the first collection)."""
    path = ledger_path(course)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ledger_line(provenance: Provenance, **context: str) -> dict:
    """A ledger line: the file's provenance plus what the collection did with it."""
    return {**asdict(provenance), **context}


def describe_source(source: dict | None) -> str:
    """The graded file in one phrase, for the grade sheet: zip, entry, submission id, digest."""
    if not source:
        return ""
    return (
        f"{source['zip_name']}: {source['entry']} (submission {source['submission_id']}, "
        f"sha256 {source['sha256'][:12]})"
    )
