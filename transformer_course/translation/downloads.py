"""Fetching a public parallel corpus for lesson 9's real-data run (needs internet, e.g. Colab).

Nothing in the lessons or tests downloads anything; this is for a reader who wants to train the
translator on real sentences. :func:`download_corpus` fetches a named corpus into a cache folder,
checks it, extracts its tab-separated file and prints its licence and attribution.

**How a download is checked.** A corpus whose publisher states a digest of the exact file is
checked against that digest. The Tatoeba exports of manythings.org are rebuilt from time to time,
so nobody can state one digest for them in advance; for those the first download is *pinned*: its
SHA-256 is written next to it in the cache and printed, and every later download into that cache
must match it. A changed file is then refused with a message instead of silently training on
different data. Nothing is trusted without saying so: the pinning message names the digest it
recorded, so two people can compare theirs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE_VARIABLE = "TRANSFORMER_COURSE_DATA"
TATOEBA_LICENCE = "CC BY 2.0 FR (https://creativecommons.org/licenses/by/2.0/fr/)"


@dataclass(frozen=True)
class PublishedDigest:
    """A digest of the exact archive, as its publisher states it, and where it is stated."""

    algorithm: str
    value: str
    stated_in: str


@dataclass(frozen=True)
class CorpusSource:
    """Where a corpus lives, which file of its zip archive holds the pairs, and its terms."""

    name: str
    url: str
    member: str
    languages: str
    licence: str
    attribution: str
    digest: PublishedDigest | None = None


CORPORA: dict[str, CorpusSource] = {
    source.name: source
    for source in (
        CorpusSource(
            name="tatoeba-spa-eng",
            url="https://www.manythings.org/anki/spa-eng.zip",
            member="spa.txt",
            languages="English -> Spanish",
            licence=TATOEBA_LICENCE,
            attribution=(
                "Sentence pairs from the Tatoeba Project (https://tatoeba.org), exported by "
                "manythings.org/anki; each line's third column names its contributors."
            ),
        ),
        CorpusSource(
            name="d2l-fra-eng",
            url="https://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip",
            member="fra.txt",
            languages="English -> French",
            licence=TATOEBA_LICENCE,
            attribution=(
                "Sentence pairs from the Tatoeba Project (https://tatoeba.org), as exported by "
                "manythings.org/anki and packaged by Dive into Deep Learning (d2l.ai)."
            ),
            digest=PublishedDigest(
                algorithm="sha1",
                value="94646ad1522d915e7b0f9296181140edcf86a4f5",
                stated_in="d2l's DATA_HUB['fra-eng'] (github.com/d2l-ai/d2l-en, d2l/torch.py)",
            ),
        ),
    )
}


class DownloadError(RuntimeError):
    """A corpus could not be fetched or did not pass its check."""


def default_cache() -> Path:
    """``$TRANSFORMER_COURSE_DATA`` if set, else ``~/.cache/transformer_course``."""
    return Path(os.environ.get(CACHE_VARIABLE) or Path.home() / ".cache" / "transformer_course")


def file_digest(path: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_corpus(
    corpus: str | CorpusSource,
    cache_dir: str | Path | None = None,
    url: str | None = None,
    timeout_s: float = 60.0,
) -> Path:
    """The tab-separated file of ``corpus``, downloaded, checked and extracted on first use.

    ``corpus`` is a name from :data:`CORPORA` (or a :class:`CorpusSource`); ``url`` replaces
    its address (a mirror, or a local server in tests). A corpus already in the cache is reused
    without any network access. Raises :class:`DownloadError` with what to do when offline, when
    the server refuses, or when the file fails its check.
    """
    source = _resolve(corpus)
    cache = Path(cache_dir) if cache_dir is not None else default_cache()
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{source.name}.zip"
    extracted = cache / f"{source.name}.tsv"
    if extracted.is_file() and archive.is_file():
        _verify(source, archive, cache)
        _announce(source, extracted)
        return extracted
    _fetch(url or source.url, archive, timeout_s, source.name)
    try:
        _verify(source, archive, cache)
    except DownloadError as error:
        archive.unlink()
        raise DownloadError(f"{error} The downloaded file was deleted.") from None
    _extract(source, archive, extracted)
    _announce(source, extracted)
    return extracted


def _resolve(corpus: str | CorpusSource) -> CorpusSource:
    if isinstance(corpus, CorpusSource):
        return corpus
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; choose one of {sorted(CORPORA)}")
    return CORPORA[corpus]


def _fetch(url: str, archive: Path, timeout_s: float, name: str) -> None:
    partial = archive.with_suffix(".part")
    # Some hosts refuse Python's default user agent.
    request = urllib.request.Request(url, headers={"User-Agent": "transformer_course (course download)"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response, partial.open("wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError) as error:
        partial.unlink(missing_ok=True)
        reason = getattr(error, "reason", error)
        raise DownloadError(
            f"could not download {name} from {url} ({reason}). This needs internet access "
            "(for example on Colab). Without it, copy a tab-separated corpus onto this machine "
            "and train with `python -m transformer_course.train --data FILE`."
        ) from None
    partial.replace(archive)


def _verify(source: CorpusSource, archive: Path, cache: Path) -> None:
    if source.digest is not None:
        found = file_digest(archive, source.digest.algorithm)
        if found != source.digest.value:
            raise DownloadError(
                f"{source.name}: the downloaded file's {source.digest.algorithm} is {found}, but "
                f"{source.digest.stated_in} states {source.digest.value}: the download is damaged "
                "or the file has changed. Try again, or use another corpus."
            )
        return
    found = file_digest(archive, "sha256")
    pin = cache / f"{source.name}.sha256"
    if not pin.is_file():
        pin.write_text(found + "\n", encoding="utf-8")
        print(
            f"{source.name}: first download, SHA-256 {found}. Its publisher states no digest (the "
            f"export is rebuilt from time to time), so this one is now pinned in {pin}: later "
            "downloads into this cache must match it. Delete that file to accept a newer export."
        )
        return
    pinned = pin.read_text(encoding="utf-8").strip()
    if found != pinned:
        raise DownloadError(
            f"{source.name}: the downloaded file's SHA-256 is {found}, but this cache pinned "
            f"{pinned} at the first download ({pin}): the export has changed or the download is "
            "damaged. Delete the pin file to accept a new export on purpose."
        )


def _extract(source: CorpusSource, archive: Path, extracted: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = [n for n in bundle.namelist() if Path(n).name == source.member]
            if not members:
                raise DownloadError(
                    f"{source.name}: the archive holds no {source.member} "
                    f"(it has {', '.join(bundle.namelist()) or 'nothing'})"
                )
            with bundle.open(members[0]) as inside, extracted.open("wb") as out:
                shutil.copyfileobj(inside, out)
    except zipfile.BadZipFile:
        archive.unlink()
        raise DownloadError(
            f"{source.name}: the downloaded file is not a zip archive (the server may have sent an "
            "error page); it was deleted. Try again later or download it by hand and use --data."
        ) from None


def _announce(source: CorpusSource, extracted: Path) -> None:
    print(f"{source.name} ({source.languages}): {extracted}")
    print(f"  licence: {source.licence}")
    print(f"  attribution: {source.attribution}")
