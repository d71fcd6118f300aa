"""Whether an LMS download can be read safely, decided before anything slow or lasting happens.

``check_archive`` opens the zip and reads every entry once, counting the bytes it really gets, so
a truncated download, a file that is no zip, an empty or password-protected zip and a zip bomb
(more entries, more uncompressed bytes or a higher compression ratio than any class's download
has) each end in one ``ArchiveError`` saying what is wrong and what to do, before
``generate_assignment`` runs and before ``submitted/``, the gradebook or the grade sheet change.
The limits hold for the sizes the zip declares and again while reading, so a zip that lies about
its sizes is stopped too. Entry names are not judged here: only their last part is ever read
(``course_build.instructor.lms``).
"""

import zipfile
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 20_000
MAX_TOTAL_BYTES = 2 * 2**30
MAX_RATIO = 500  # unpacked / packed size of one entry above RATIO_FLOOR; deflate tops out near 1030
RATIO_FLOOR = 2**20
CHUNK = 2**20


class ArchiveError(ValueError):
    """The archive cannot be collected; the message is one line for the instructor."""


@dataclass(frozen=True)
class ZipLimits:
    """How much one download may hold (the defaults are far above any class's download)."""

    max_entries: int = MAX_ENTRIES
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_ratio: float = MAX_RATIO


def _declared_problem(archive: Path, infos: list[zipfile.ZipInfo], limits: ZipLimits) -> str | None:
    files = [info for info in infos if not info.is_dir()]
    if not files:
        return f"{archive} is empty (no files in it): download the submissions again"
    if len(infos) > limits.max_entries:
        return f"{archive} has {len(infos)} entries, more than {limits.max_entries}: not an LMS download"
    if any(info.flag_bits & 0x1 for info in files):
        return (
            f"{archive} is encrypted (password-protected): download the submissions again without a "
            "password, or unpack it and zip the files again"
        )
    total = sum(info.file_size for info in files)
    if total > limits.max_total_bytes:
        return _too_big(archive, limits)
    for info in files:
        if info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            return (
                f"{archive} holds {info.filename!r}, which unpacks to more than {limits.max_ratio:g} "
                "times its packed size: a zip bomb, not an LMS download"
            )
    return None


def _too_big(archive: Path, limits: ZipLimits) -> str:
    return (
        f"{archive} unpacks to more than {limits.max_total_bytes // 2**20} MiB: a zip bomb or not "
        "an LMS download"
    )


def _read_everything(archive: Path, zipped: zipfile.ZipFile, limits: ZipLimits) -> None:
    """Read every entry, stopping as soon as more bytes come out than the limits allow."""
    total = 0
    for info in zipped.infolist():
        if info.is_dir():
            continue
        with zipped.open(info) as entry:
            while chunk := entry.read(CHUNK):
                total += len(chunk)
                if total > limits.max_total_bytes:
                    raise ArchiveError(_too_big(archive, limits))


def _unreadable(archive: Path, error: Exception) -> str:
    """Why a file zipfile could not read is no usable download: not a zip at all, or a cut one."""
    with archive.open("rb") as handle:
        starts_like_a_zip = handle.read(4) == b"PK\x03\x04"
    if not starts_like_a_zip:
        return f"{archive} is not a zip file: download the submissions again as one zip"
    reason = str(error) or type(error).__name__
    return (
        f"{archive} is a damaged or incomplete zip ({reason}): the download was probably cut short; "
        "download the submissions again"
    )


def check_archive(archive: Path, limits: ZipLimits = ZipLimits()) -> None:
    """Raise ArchiveError (one line: what is wrong, what to do) unless ``archive`` is a whole,
    readable, unencrypted zip of reasonable size with at least one file."""
    if not archive.is_file():
        raise ArchiveError(f"{archive} does not exist")
    try:
        with zipfile.ZipFile(archive) as zipped:
            problem = _declared_problem(archive, zipped.infolist(), limits)
            if problem:
                raise ArchiveError(problem)
            _read_everything(archive, zipped, limits)
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as error:
        raise ArchiveError(_unreadable(archive, error)) from None
    except (NotImplementedError, RuntimeError) as error:
        raise ArchiveError(f"{archive} cannot be read ({error}): zip the submissions again") from None
