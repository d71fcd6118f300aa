"""Stable, safe nbgrader student ids for the names an LMS gives.

nbgrader uses the student id as a folder name and a database key, so it must be short, plain and
unique. A name that already is lower-case ASCII letters and digits (Canvas's usual ``smithjane``)
is used as it is. Any other name becomes an ASCII slug plus six hex digits of a hash of the exact
name: ``zoë`` → ``zoe-7f3a1c``, ``anne marie`` → ``anne-marie-…``, ``../x`` → ``x-…``. Such an id
always holds a ``-`` and a plain one never does, so the two kinds cannot collide, and two names
that differ in any way get different hashes. Two students with the same name are told apart by
their LMS user id (``assign_ids``).
"""

import hashlib
import re
import unicodedata

PLAIN = re.compile(r"^[a-z][a-z0-9]{0,63}$")


def nbgrader_id(name: str) -> str:
    """The id of an LMS name: the name itself when plain, else ``slug-hash``."""
    if PLAIN.match(name):
        return name
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:40].strip("-") or "student"
    if not slug[0].isalpha():
        slug = f"s-{slug}"
    return f"{slug}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:6]}"


def assign_ids(names: dict[str, str], known: dict[str, str]) -> dict[str, str]:
    """An id for each LMS user id in ``names`` (user id -> name): the one ``known`` (user id -> id,
    from earlier batches) holds, else ``nbgrader_id(name)``, suffixed with ``-u<user id>`` when
    another student already has that id. Users are taken in user-id order, so a batch always gives
    the same ids."""
    taken = {student_id: user_id for user_id, student_id in known.items()}
    ids = {}
    for user_id in sorted(names, key=lambda u: (len(u), u)):
        student_id = known.get(user_id)
        if student_id is None:
            student_id = nbgrader_id(names[user_id])
            if student_id in taken:
                student_id = f"{student_id}-u{user_id}"
            taken[student_id] = user_id
        ids[user_id] = student_id
    return ids
