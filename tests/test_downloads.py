"""The corpus downloader, against a corpus served on 127.0.0.1 (no internet needed or used)."""

import hashlib
import http.server
import io
import threading
import zipfile

import pytest

from transformer_course.translation.downloads import (
    CORPORA,
    CorpusSource,
    DownloadError,
    PublishedDigest,
    download_corpus,
)
from transformer_course.translation.parallel_data import load_tsv

PAIRS = "Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #4986655 (cueyayotl)\n" \
        "I ate.\tComí.\n"  # fmt: skip


def zipped(text: str, member: str = "spa.txt") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("_about.txt", "about the export")
        bundle.writestr(member, text)
    return buffer.getvalue()


@pytest.fixture
def server():
    """A local HTTP server whose one file can be swapped; yields (base URL, files dict)."""
    files: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"not found")

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", files
    httpd.shutdown()
    httpd.server_close()


def test_first_download_is_pinned_then_reused_offline(server, tmp_path, capsys):
    base, files = server
    files["/spa-eng.zip"] = zipped(PAIRS)
    path = download_corpus("tatoeba-spa-eng", tmp_path, url=f"{base}/spa-eng.zip")
    assert load_tsv(path) == [("Go.", "Ve."), ("I ate.", "Comí.")]
    pin = (tmp_path / "tatoeba-spa-eng.sha256").read_text().strip()
    assert pin == hashlib.sha256(files["/spa-eng.zip"]).hexdigest()
    out = capsys.readouterr().out
    assert "pinned" in out and pin in out
    assert "CC BY 2.0 FR" in out and "Tatoeba" in out, "the licence and attribution are stated"
    files.clear()  # the server has nothing now: a second call must not need it
    assert download_corpus("tatoeba-spa-eng", tmp_path, url=f"{base}/spa-eng.zip") == path


def test_a_changed_export_is_refused(server, tmp_path):
    base, files = server
    files["/spa-eng.zip"] = zipped(PAIRS)
    download_corpus("tatoeba-spa-eng", tmp_path, url=f"{base}/spa-eng.zip")
    for cached in ("tatoeba-spa-eng.zip", "tatoeba-spa-eng.tsv"):
        (tmp_path / cached).unlink()
    files["/spa-eng.zip"] = zipped(PAIRS + "Run!\t¡Corre!\n")
    with pytest.raises(DownloadError, match="pinned"):
        download_corpus("tatoeba-spa-eng", tmp_path, url=f"{base}/spa-eng.zip")
    assert not (tmp_path / "tatoeba-spa-eng.zip").exists(), "a refused download is not kept"


def test_a_published_digest_is_checked(server, tmp_path):
    base, files = server
    files["/fra.zip"] = zipped("Go.\tVa !\n", member="fra-eng/fra.txt")
    good = hashlib.sha1(files["/fra.zip"]).hexdigest()

    def source(value: str) -> CorpusSource:
        digest = PublishedDigest("sha1", value, "this test")
        return CorpusSource(
            "test-fra", f"{base}/fra.zip", "fra.txt", "English -> French", "CC0", "test", digest
        )

    with pytest.raises(DownloadError, match="this test states"):
        download_corpus(source("0" * 40), tmp_path)
    assert load_tsv(download_corpus(source(good), tmp_path)) == [("Go.", "Va !")]
    assert not (tmp_path / "test-fra.sha256").exists(), "a published digest needs no pin"


def test_offline_and_bad_answers_get_clear_errors(server, tmp_path):
    base, files = server
    with pytest.raises(DownloadError, match="internet access"):
        download_corpus("tatoeba-spa-eng", tmp_path, url=f"{base}/missing.zip")
    files["/page.zip"] = b"<html>please use a browser</html>"
    with pytest.raises(DownloadError, match="not a zip"):
        download_corpus("tatoeba-spa-eng", tmp_path / "other", url=f"{base}/page.zip")
    files["/empty.zip"] = zipped(PAIRS, member="eng.txt")
    with pytest.raises(DownloadError, match="holds no spa.txt"):
        download_corpus("tatoeba-spa-eng", tmp_path / "third", url=f"{base}/empty.zip")
    with pytest.raises(ValueError, match="unknown corpus"):
        download_corpus("wmt14", tmp_path)


def test_every_registered_corpus_states_its_terms():
    for source in CORPORA.values():
        assert source.url.startswith("https://") and source.licence and source.attribution
        assert source.digest is None or len(source.digest.value) in (40, 64)


def test_train_command_downloads_then_trains(server, tmp_path, capsys):
    from transformer_course.train import main
    from transformer_course.translation.corpus import make_corpus

    base, files = server
    pairs = make_corpus(n_train=300, n_valid=0, n_test=0, n_length=0, seed=3).train
    files["/spa-eng.zip"] = zipped("".join(f"{en}\t{es}\n" for en, es in pairs))
    out = tmp_path / "real.pt"
    results = main(["--preset", "tiny", "--download", "tatoeba-spa-eng", "--url", f"{base}/spa-eng.zip",
                    "--cache", str(tmp_path / "cache"), "--out", str(out), "--max-steps", "2",
                    "--no-progress", "--eval-sentences", "1"])  # fmt: skip
    assert results["data"]["source"] == "tatoeba-spa-eng" and "CC BY 2.0 FR" in results["data"]["licence"]
    assert sum(results["data"]["pairs"].values()) == 300 and out.is_file()
