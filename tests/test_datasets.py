"""Tests for neuralparse.datasets: treebank names, data root priority, layouts, downloads and
their verification against the SHA-256 sums of neuralparse.ud_checksums.

Downloads are exercised only against a local HTTP server on 127.0.0.1 (or a file:// URL)
serving generated CoNLL-U files or copies of the shared treebanks; nothing here reaches the
network.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import random
import re
import socket
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from neuralparse import datasets, ud_checksums
from neuralparse.datasets import (
    DatasetError,
    Treebank,
    UnverifiedDownloadWarning,
    data_root,
    download_root,
    explain_data_root,
    find_local_split,
    resolve_treebank,
    treebank_files,
    treebank_paths,
)
from neuralparse.errors import InputError
from neuralparse.io import read_conllu
from tests.conftest import SHARED_UD

# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def random_conllu(sentences: int, seed: int) -> str:
    """Valid CoNLL-U: random single-rooted trees, each word attached to an earlier-placed one."""
    rng = random.Random(seed)
    blocks = []
    for index in range(sentences):
        n = rng.randint(1, 8)
        order = rng.sample(range(1, n + 1), n)
        heads = [0] * (n + 1)
        for placed, word in enumerate(order):
            heads[word] = 0 if placed == 0 else rng.choice(order[:placed])
        lines = [f"# sent_id = s{seed}-{index}", f"# text = {' '.join(['w'] * n)}"]
        for word in range(1, n + 1):
            deprel = "root" if heads[word] == 0 else "dep"
            lines.append(f"{word}\tw{word}\tw\tX\t_\t_\t{heads[word]}\t{deprel}\t_\t_")
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def leftovers(directory: Path) -> list[str]:
    """Every file under ``directory`` (temporary files included)."""
    return sorted(p.name for p in directory.rglob("*") if p.is_file())


TINY = "UD_Test-Tiny"
TINY_CODE = "tt_tiny"


@dataclass
class Server:
    """A local HTTP server serving ``directory``; records the paths it was asked for."""

    directory: Path
    url: str
    requests: list[str]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    served = tmp_path / "served"
    served.mkdir()
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet test output
            return

        def do_GET(self) -> None:
            requests.append(self.path)
            if "/error500/" in self.path:
                self.send_error(500, "Internal Server Error")
            elif "/truncated/" in self.path:
                # Promise more bytes than are sent, then hang up mid-file.
                body = random_conllu(3, 0).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body) + 100))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True
            else:
                super().do_GET()

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(served))
    )
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield Server(served, f"http://127.0.0.1:{httpd.server_address[1]}", requests)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


Sums = dict[str, dict[str, dict[str, str]]]


def sha256(data: str | bytes) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def serve_release(
    server: Server,
    texts: dict[str, str],
    release: str = datasets.DEFAULT_RELEASE,
    *,
    sums: Sums | None = None,
) -> None:
    """Serve ``texts`` as the release files of the tiny treebank at tag ``release``; with
    ``sums``, also record their true sums there, as the package table does for real releases."""
    for split, text in texts.items():
        write(server.directory / TINY / release / f"{TINY_CODE}-ud-{split}.conllu", text)
        if sums is not None:
            sums.setdefault(release, {}).setdefault(TINY_CODE, {})[split] = sha256(text)


@pytest.fixture
def sums(monkeypatch: pytest.MonkeyPatch) -> Sums:
    """A writable copy of the package's checksum table, in its place for one test."""
    table = {
        release: {code: dict(by_split) for code, by_split in by_code.items()}
        for release, by_code in ud_checksums.UD_RELEASE_SHA256.items()
    }
    monkeypatch.setattr(ud_checksums, "UD_RELEASE_SHA256", table)
    return table


def record_of(directory: Path) -> dict[str, dict[str, object]]:
    return json.loads((directory / datasets.DOWNLOAD_RECORD).read_text(encoding="utf-8"))


def free_port() -> int:
    """A port on 127.0.0.1 with nothing listening (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may see the developer's data root, base URL or release settings, or touch the
    real cache."""
    monkeypatch.delenv(datasets.ENV_DATA_ROOT, raising=False)
    monkeypatch.delenv(datasets.ENV_BASE_URL, raising=False)
    monkeypatch.delenv(datasets.ENV_RELEASE, raising=False)
    monkeypatch.delenv(datasets.ENV_UNVERIFIED, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["en_ewt", "EN_EWT", "English-EWT", "english-ewt", "UD_English-EWT", "ud_english-ewt"]
)
def test_short_and_long_names_resolve_to_the_same_treebank(name: str) -> None:
    treebank = resolve_treebank(name)
    assert treebank.ud_dir == "UD_English-EWT"
    assert treebank.code == "en_ewt"
    assert treebank.release_file("dev") == "en_ewt-ud-dev.conllu"


@pytest.mark.parametrize(
    ("ud_dir", "code"),
    [
        ("UD_English-EWT", "en_ewt"),
        ("UD_Turkish-IMST", "tr_imst"),
        ("UD_Greek-GDT", "el_gdt"),
        ("UD_Hungarian-Szeged", "hu_szeged"),
        ("UD_Gothic-PROIEL", "got_proiel"),
        ("UD_Ancient_Greek-PROIEL", "grc_proiel"),
    ],
)
def test_registry_holds_the_shared_treebanks(ud_dir: str, code: str) -> None:
    assert resolve_treebank(code).ud_dir == ud_dir
    assert resolve_treebank(ud_dir).code == code


def test_registry_entries_are_well_formed() -> None:
    treebanks = datasets.known_treebanks()
    assert len(treebanks) >= 40
    for treebank in treebanks:
        assert re.fullmatch(r"UD_[A-Z][A-Za-z_]*-[A-Za-z]+", treebank.ud_dir), treebank
        assert treebank.code is not None and re.fullmatch(r"[a-z]{2,3}_[a-z]+", treebank.code)
        assert treebank.splits and set(treebank.splits) <= set(datasets.SPLITS)
        assert "test" in treebank.splits
    assert resolve_treebank("en_pud").splits == ("test",)
    assert resolve_treebank("kk_ktb").splits == ("train", "test")


def test_unknown_treebank_by_directory_name_with_explicit_code() -> None:
    treebank = resolve_treebank("Xx-Corpus", code="xx_corpus")
    assert treebank == Treebank("UD_Xx-Corpus", "xx_corpus", splits_known=False)
    assert resolve_treebank("ud_Xx-Corpus").ud_dir == "UD_Xx-Corpus"
    # Without a code the release file name cannot be formed, and the message says how to fix it.
    with pytest.raises(DatasetError, match="code="):
        resolve_treebank("UD_Xx-Corpus").release_file("train")


def test_explicit_code_overrides_the_registry() -> None:
    assert resolve_treebank("English-EWT", code="en_ewt2").code == "en_ewt2"


@pytest.mark.parametrize("name", ["xx_nothing", "", "   "])
def test_unresolvable_names_are_input_errors(name: str) -> None:
    with pytest.raises(InputError, match="treebank"):
        resolve_treebank(name)


# --------------------------------------------------------------------------------------------
# Data root priority
# --------------------------------------------------------------------------------------------


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A repository whose ../shared/data/ud exists, a working directory, a cache home."""
    repo = tmp_path / "work" / "repo"
    repo.mkdir(parents=True)
    shared = tmp_path / "work" / "shared" / "data" / "ud"
    shared.mkdir(parents=True)
    cwd = tmp_path / "elsewhere" / "cwd"
    cwd.mkdir(parents=True)
    return {"repo": repo, "shared": shared, "cwd": cwd, "xdg": tmp_path / "xdg"}


def test_override_beats_environment_beats_shared_beats_cache(places: dict[str, Path]) -> None:
    env = {datasets.ENV_DATA_ROOT: "/from/env", "XDG_CACHE_HOME": str(places["xdg"])}
    where = {"repo_root": places["repo"], "cwd": places["cwd"]}
    assert data_root("/from/override", environ=env, **where) == Path("/from/override")
    assert data_root(None, environ=env, **where) == Path("/from/env")
    assert data_root("", environ=env, **where) == Path("/from/env")  # Hydra's empty value
    env.pop(datasets.ENV_DATA_ROOT)
    assert data_root(None, environ=env, **where) == places["shared"].resolve()
    places["shared"].rmdir()
    assert data_root(None, environ=env, **where) == places["xdg"] / "neuralparse" / "ud"


def test_shared_directory_next_to_the_working_directory(places: dict[str, Path]) -> None:
    cwd_shared = places["cwd"].parent / "shared" / "data" / "ud"
    cwd_shared.mkdir(parents=True)
    places["shared"].rmdir()  # nothing next to the repository
    env = {"XDG_CACHE_HOME": str(places["xdg"])}
    root = data_root(environ=env, repo_root=places["repo"], cwd=places["cwd"])
    assert root == cwd_shared.resolve()


def test_cache_defaults_to_home_without_xdg(
    places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    places["shared"].rmdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = data_root(environ={}, repo_root=places["repo"], cwd=places["cwd"])
    assert root == tmp_path / "home" / ".cache" / "neuralparse" / "ud"


def test_downloads_never_go_to_the_shared_directory(places: dict[str, Path]) -> None:
    env = {"XDG_CACHE_HOME": str(places["xdg"])}
    where = {"environ": env, "repo_root": places["repo"], "cwd": places["cwd"]}
    assert data_root(**where) == places["shared"].resolve()
    assert download_root(**where) == places["xdg"] / "neuralparse" / "ud"
    assert download_root("/over", **where) == Path("/over")


def test_process_environment_is_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(datasets.ENV_DATA_ROOT, str(tmp_path / "env-root"))
    assert data_root() == tmp_path / "env-root"
    assert data_root(tmp_path / "override") == tmp_path / "override"


def test_explanation_lists_every_place_and_marks_the_winner(places: dict[str, Path]) -> None:
    env = {"XDG_CACHE_HOME": str(places["xdg"])}
    text = explain_data_root(environ=env, repo_root=places["repo"], cwd=places["cwd"])
    lines = text.splitlines()
    assert "override (data.root): (not set)" in lines[1]
    assert f"${datasets.ENV_DATA_ROOT}: (not set)" in lines[2]
    used = [line for line in lines if line.endswith("<- used")]
    assert len(used) == 1 and str(places["shared"].resolve()) in used[0]
    assert str(places["xdg"] / "neuralparse" / "ud") in text


# --------------------------------------------------------------------------------------------
# Local layouts
# --------------------------------------------------------------------------------------------


def test_shared_layout(tmp_path: Path) -> None:
    for split in datasets.SPLITS:
        write(tmp_path / "UD_Greek-GDT" / f"{split}.conllu", random_conllu(2, 1))
    paths = treebank_paths("el_gdt", root=tmp_path, download=False)
    assert paths == {s: tmp_path / "UD_Greek-GDT" / f"{s}.conllu" for s in datasets.SPLITS}


def test_release_layout_and_split_selection(tmp_path: Path) -> None:
    for split in ("train", "test"):
        write(tmp_path / "UD_Greek-GDT" / f"el_gdt-ud-{split}.conllu", random_conllu(2, 2))
    paths = treebank_paths("Greek-GDT", root=tmp_path, splits=("test",), download=False)
    assert paths == {"test": tmp_path / "UD_Greek-GDT" / "el_gdt-ud-test.conllu"}


def test_directory_name_matches_case_insensitively(tmp_path: Path) -> None:
    write(tmp_path / "ud_greek-gdt" / "dev.conllu", random_conllu(1, 3))
    paths = treebank_paths("el_gdt", root=tmp_path, splits=("dev",), download=False)
    assert paths["dev"] == tmp_path / "ud_greek-gdt" / "dev.conllu"


def test_unknown_treebank_release_files_found_without_code(tmp_path: Path) -> None:
    write(tmp_path / "UD_Xx-Corpus" / "xx_corpus-ud-train.conllu", random_conllu(1, 4))
    treebank = resolve_treebank("UD_Xx-Corpus")
    found = find_local_split(treebank, "train", tmp_path)
    assert found == (tmp_path / "UD_Xx-Corpus" / "xx_corpus-ud-train.conllu",)
    assert find_local_split(treebank, "dev", tmp_path) == ()


def test_release_parts_are_the_split_in_name_order(tmp_path: Path) -> None:
    for part in ("b", "a"):
        write(tmp_path / "UD_Czech-PDT" / f"cs_pdt-ud-train-{part}.conllu", random_conllu(1, 5))
    folder = tmp_path / "UD_Czech-PDT"
    files = treebank_files("cs_pdt", root=tmp_path, splits=("train",), download=False)
    assert files == {
        "train": (folder / "cs_pdt-ud-train-a.conllu", folder / "cs_pdt-ud-train-b.conllu")
    }
    # A caller that reads one file per split is told how to join them; nothing is written.
    with pytest.raises(DatasetError, match=r"cat cs_pdt-ud-train-a.conllu cs_pdt-ud-train-b"):
        treebank_paths("cs_pdt", root=tmp_path, splits=("train",), download=False)
    assert leftovers(tmp_path) == ["cs_pdt-ud-train-a.conllu", "cs_pdt-ud-train-b.conllu"]


def test_missing_file_without_download_says_where_to_put_it(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        treebank_paths("hu_szeged", root=tmp_path, download=False)
    message = str(caught.value)
    assert str(tmp_path / "UD_Hungarian-Szeged" / "train.conllu") in message
    assert "hu_szeged-ud-train.conllu" in message
    assert "github.com/UniversalDependencies/UD_Hungarian-Szeged" in message


def test_split_absent_from_the_release(tmp_path: Path) -> None:
    write(tmp_path / "UD_English-PUD" / "test.conllu", random_conllu(1, 6))
    with pytest.raises(DatasetError, match=r"UD_English-PUD has no train/dev split.*has test"):
        treebank_paths("en_pud", root=tmp_path, download=False)
    paths = treebank_paths("en_pud", root=tmp_path, download=False, missing="skip")
    assert list(paths) == ["test"]


def test_unknown_split_name_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="unknown split"):
        treebank_paths("en_ewt", root=tmp_path, splits=("validation",), download=False)


def test_automatic_root_finds_files_in_the_download_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A treebank downloaded earlier to the cache is found even when the data root is elsewhere.
    cache = tmp_path / "xdg-cache" / "neuralparse" / "ud"
    write(cache / "UD_Basque-BDT" / "dev.conllu", random_conllu(1, 7))
    assert download_root() == cache
    paths = treebank_paths("eu_bdt", splits=("dev",), download=False)
    assert paths["dev"] == cache / "UD_Basque-BDT" / "dev.conllu"


@pytest.mark.treebank
@pytest.mark.parametrize("code", ["en_ewt", "tr_imst", "el_gdt", "hu_szeged", "got_proiel"])
def test_shared_treebanks_are_found_in_place(ud_root: Path, code: str) -> None:
    treebank = resolve_treebank(code)
    if not (ud_root / treebank.ud_dir).is_dir():
        pytest.skip(f"{treebank.ud_dir} not in {ud_root}")
    expected = {split: ud_root / treebank.ud_dir / f"{split}.conllu" for split in datasets.SPLITS}
    assert treebank_paths(code, root=ud_root, download=False) == expected
    # Automatic resolution picks the shared directory next to the repository.
    assert treebank_paths(code, download=False) == {
        split: path.resolve() for split, path in expected.items()
    }


# --------------------------------------------------------------------------------------------
# Releases and checksums
# --------------------------------------------------------------------------------------------


def test_release_argument_beats_environment_beats_default() -> None:
    env = {datasets.ENV_RELEASE: " r2.15 "}
    assert datasets.ud_release(environ={}) == datasets.DEFAULT_RELEASE == "r2.17"
    assert datasets.ud_release(environ=env) == "r2.15"
    assert datasets.ud_release("r2.16", environ=env) == "r2.16"
    assert datasets.ud_release("", environ=env) == "r2.15"  # an empty value is "not set"


def test_url_names_the_release_tag() -> None:
    url = datasets.split_url(resolve_treebank("en_ewt"), "train")
    assert url == (
        "https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/r2.17/"
        "en_ewt-ud-train.conllu"
    )
    assert "/r2.14/" in datasets.split_url(resolve_treebank("en_ewt"), "dev", release="r2.14")


def test_unverified_policy_choices() -> None:
    assert datasets.unverified_policy(environ={}) == "warn"
    assert datasets.unverified_policy(environ={datasets.ENV_UNVERIFIED: "Refuse"}) == "refuse"
    assert datasets.unverified_policy("warn", environ={datasets.ENV_UNVERIFIED: "refuse"}) == "warn"
    with pytest.raises(DatasetError, match=r"'maybe'.*warn, refuse"):
        datasets.unverified_policy(environ={datasets.ENV_UNVERIFIED: "maybe"})


def test_checksum_table_is_well_formed() -> None:
    assert datasets.DEFAULT_RELEASE in ud_checksums.UD_RELEASE_SHA256
    for release, by_code in ud_checksums.UD_RELEASE_SHA256.items():
        assert re.fullmatch(r"r2\.[0-9]+", release)
        for code, by_split in by_code.items():
            treebank = resolve_treebank(code)  # every file belongs to a registered treebank
            assert set(by_split) <= set(treebank.splits), code
            for checksum in by_split.values():
                assert re.fullmatch(r"[0-9a-f]{64}", checksum), (code, checksum)
    # Another release, or another file prefix than the registry's, has no known sum.
    ewt = resolve_treebank("en_ewt")
    assert datasets.known_sha256(ewt, "dev", "r2.17") is not None
    assert datasets.known_sha256(ewt, "dev", "r2.9") is None
    assert datasets.known_sha256(resolve_treebank("en_ewt", code="en_x"), "dev", "r2.17") is None


@pytest.mark.treebank
@pytest.mark.parametrize("code", ["en_ewt", "tr_imst", "el_gdt", "hu_szeged", "got_proiel"])
def test_checksums_are_those_of_the_shared_treebanks(ud_root: Path, code: str) -> None:
    treebank = resolve_treebank(code)
    for split in datasets.SPLITS:
        data = (ud_root / treebank.ud_dir / f"{split}.conllu").read_bytes()
        assert datasets.known_sha256(treebank, split, datasets.DEFAULT_RELEASE) == sha256(data)


# --------------------------------------------------------------------------------------------
# Downloads from a local server
# --------------------------------------------------------------------------------------------


def test_download_saves_verified_files(
    server: Server, tmp_path: Path, sums: Sums, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = {split: random_conllu(5, seed) for seed, split in enumerate(datasets.SPLITS)}
    serve_release(server, texts, sums=sums)
    root = tmp_path / "root"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # verified files come without a warning
        paths = treebank_paths(TINY, root=root, code=TINY_CODE, base=server.url)
    for split, text in texts.items():
        assert paths[split] == root / TINY / f"{split}.conllu"
        assert paths[split].read_bytes() == text.encode("utf-8")
        assert len(read_conllu(paths[split])) == 5
    assert leftovers(root) == ["dev.conllu", "downloads.json", "test.conllu", "train.conllu"]
    assert sorted(server.requests) == sorted(
        f"/{TINY}/r2.17/{TINY_CODE}-ud-{split}.conllu" for split in datasets.SPLITS
    )
    assert record_of(root / TINY)["dev.conllu"] == {
        "url": f"{server.url}/{TINY}/r2.17/{TINY_CODE}-ud-dev.conllu",
        "release": "r2.17",
        "sha256": sha256(texts["dev"]),
        "verified": True,
    }
    assert "train.conllu" in capsys.readouterr().err  # the progress bar

    # Present now: a second call reads the disk and asks the server nothing.
    assert treebank_paths(TINY, root=root, code=TINY_CODE, base=server.url) == paths
    assert len(server.requests) == 3


@pytest.mark.parametrize("where", ["argument", "environment"])
def test_checksum_mismatch_is_an_error_and_leaves_nothing(
    server: Server, tmp_path: Path, sums: Sums, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    text = random_conllu(4, 20)
    serve_release(server, {"dev": text}, "r2.16", sums=sums)
    sums["r2.16"][TINY_CODE]["dev"] = expected = sha256("another file")
    if where == "environment":
        monkeypatch.setenv(datasets.ENV_RELEASE, "r2.16")
    root = tmp_path / "root"
    with pytest.raises(DatasetError) as caught:
        treebank_paths(
            TINY,
            root=root,
            splits=("dev",),
            code=TINY_CODE,
            base=server.url,
            release="r2.16" if where == "argument" else None,
            progress=False,
        )
    message = str(caught.value)
    assert f"{server.url}/{TINY}/r2.16/{TINY_CODE}-ud-dev.conllu" in message
    assert f"SHA-256 mismatch for {TINY_CODE}-ud-dev.conllu of release r2.16" in message
    assert f"expected {expected}, got {sha256(text)}" in message
    assert leftovers(tmp_path / "root") == []  # no file, no temporary file, no record


def test_unverified_download_warns_and_records_its_sum(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The release comes from the environment, and nothing is known about r2.15.
    text = random_conllu(3, 10)
    serve_release(server, {"dev": text}, "r2.15")
    root = tmp_path / "root"
    write(root / TINY / "train.conllu", random_conllu(2, 11))
    monkeypatch.setenv(datasets.ENV_BASE_URL, server.url + "/")
    monkeypatch.setenv(datasets.ENV_DATA_ROOT, str(root))
    monkeypatch.setenv(datasets.ENV_RELEASE, "r2.15")
    with pytest.warns(UnverifiedDownloadWarning) as caught:
        paths = treebank_paths(TINY, splits=("train", "dev"), code=TINY_CODE, progress=False)
    assert paths == {"train": root / TINY / "train.conllu", "dev": root / TINY / "dev.conllu"}
    assert server.requests == [f"/{TINY}/r2.15/{TINY_CODE}-ud-dev.conllu"]
    message = str(caught[0].message)
    assert "could not be verified" in message and "release r2.15" in message
    assert sha256(text) in message and datasets.ENV_UNVERIFIED in message
    entry = record_of(root / TINY)["dev.conllu"]
    assert entry["sha256"] == sha256(text) and entry["verified"] is False


@pytest.mark.parametrize("where", ["argument", "environment"])
def test_unverified_download_can_be_refused(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    serve_release(server, {"dev": random_conllu(3, 12)})
    if where == "environment":
        monkeypatch.setenv(datasets.ENV_UNVERIFIED, "refuse")
    root = tmp_path / "root"
    with pytest.raises(DatasetError, match=r"no known SHA-256 sum.*r2\.17.*refused"):
        treebank_paths(
            TINY,
            root=root,
            splits=("dev",),
            code=TINY_CODE,
            base=server.url,
            unverified="refuse" if where == "argument" else None,
        )
    assert server.requests == []  # refused before asking
    assert not root.exists()


def test_not_found_names_the_url_and_the_manual_place(server: Server, tmp_path: Path) -> None:
    root = tmp_path / "root"
    with pytest.raises(DatasetError) as caught:
        treebank_paths(TINY, root=root, code=TINY_CODE, base=server.url, progress=False)
    message = str(caught.value)
    assert f"{server.url}/{TINY}/r2.17/{TINY_CODE}-ud-train.conllu" in message
    assert "HTTP 404" in message
    assert str(root / TINY / "train.conllu") in message
    assert leftovers(tmp_path / "root") == []


def test_missing_split_of_an_unregistered_treebank_can_be_skipped(
    server: Server, tmp_path: Path, sums: Sums
) -> None:
    serve_release(server, {"test": random_conllu(2, 12)}, sums=sums)
    root = tmp_path / "root"
    paths = treebank_paths(
        TINY, root=root, code=TINY_CODE, base=server.url, missing="skip", progress=False
    )
    assert paths == {"test": root / TINY / "test.conllu"}


def test_registered_treebank_404_mentions_release_parts(server: Server, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"several files ru_syntagrus-ud-train-\*"):
        treebank_paths(
            "ru_syntagrus", root=tmp_path, splits=("train",), base=server.url, progress=False
        )


def test_registered_treebank_404_mentions_the_tag(server: Server, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"UD_Basque-BDT may have no tag r2\.3 .*/tags"):
        treebank_paths(
            "eu_bdt",
            root=tmp_path,
            splits=("dev",),
            base=server.url,
            release="r2.3",
            progress=False,
        )


def test_connection_refused_is_a_clear_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(DatasetError) as caught:
        treebank_paths("got_proiel", root=tmp_path, splits=("dev",), base=url, progress=False)
    message = str(caught.value)
    assert f"{url}/UD_Gothic-PROIEL/r2.17/got_proiel-ud-dev.conllu" in message
    assert "offline" in message
    assert str(tmp_path / "UD_Gothic-PROIEL" / "dev.conllu") in message
    # The manual instructions give the sum to check a file fetched by hand against.
    assert datasets.known_sha256(resolve_treebank("got_proiel"), "dev", "r2.17") in message
    assert leftovers(tmp_path) == []


def test_silent_server_times_out(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(DatasetError, match="could not download"):
            treebank_paths(
                "got_proiel", root=tmp_path, splits=("dev",), base=url, timeout=0.3, progress=False
            )
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "payload",
    [
        "<!DOCTYPE html><html><body>Not CoNLL-U</body></html>\n",
        "1\tw\tw\tX\t_\t_\t5\troot\t_\t_\n\n",  # head out of range
        "",
    ],
)
def test_corrupt_unverified_download_is_rejected_and_not_kept(
    server: Server, tmp_path: Path, payload: str
) -> None:
    # Without a known sum, parsing is the only check left.
    serve_release(server, {"train": payload})
    root = tmp_path / "root"
    with pytest.raises(DatasetError, match=r"not valid CoNLL-U|no sentence") as caught:
        treebank_paths(
            TINY, root=root, splits=("train",), code=TINY_CODE, base=server.url, progress=False
        )
    assert f"{TINY_CODE}-ud-train.conllu" in str(caught.value)
    assert leftovers(root) == []


@pytest.mark.parametrize(
    ("release", "expected"), [("error500", "HTTP 500"), ("truncated", "cut short")]
)
def test_server_failures_are_clear_errors(
    server: Server, tmp_path: Path, release: str, expected: str
) -> None:
    root = tmp_path / "root"
    with pytest.raises(DatasetError, match=expected) as caught:
        treebank_paths(
            TINY,
            root=root,
            splits=("dev",),
            code=TINY_CODE,
            base=server.url,
            release=release,
            progress=False,
        )
    assert f"{server.url}/{TINY}/{release}/{TINY_CODE}-ud-dev.conllu" in str(caught.value)
    assert leftovers(root) == []


@pytest.mark.treebank
def test_shared_release_file_from_a_file_url(tmp_path: Path) -> None:
    # A mirror of release r2.17 on disk (a file:// base URL): the real file is verified against
    # the package's sum; a copy with one byte changed is refused.
    shared = SHARED_UD / "UD_Hungarian-Szeged" / "dev.conllu"
    if not shared.is_file():
        pytest.skip(f"{shared} not found")
    mirror = tmp_path / "mirror"
    served = mirror / "UD_Hungarian-Szeged" / "r2.17" / "hu_szeged-ud-dev.conllu"
    served.parent.mkdir(parents=True)
    data = shared.read_bytes()
    served.write_bytes(data)
    root = tmp_path / "root"
    options = {"root": root, "splits": ("dev",), "base": mirror.as_uri(), "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = treebank_paths("hu_szeged", **options)
    assert paths["dev"].read_bytes() == data
    assert record_of(root / "UD_Hungarian-Szeged")["dev.conllu"]["verified"] is True

    paths["dev"].unlink()
    (root / "UD_Hungarian-Szeged" / datasets.DOWNLOAD_RECORD).unlink()
    changed = data.replace(b"\tvan\t", b"\tvolt\t", 1)
    assert changed != data
    served.write_bytes(changed)
    with pytest.raises(DatasetError, match=r"SHA-256 mismatch for hu_szeged-ud-dev\.conllu"):
        treebank_paths("hu_szeged", **options)
    assert leftovers(root) == []
