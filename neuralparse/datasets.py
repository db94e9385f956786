"""Universal Dependencies treebanks: where they live on disk and how to fetch them.

Where the data lives:

* the data root is, in order of priority, an explicit override (Hydra ``data.root=...``), the
  environment variable ``NEURALPARSE_DATA``, ``../shared/data/ud`` next to the repository (or
  next to the current directory) when it exists, and finally ``~/.cache/neuralparse/ud``
  (``$XDG_CACHE_HOME`` respected);
* a treebank lives in ``<root>/UD_<Language>-<Name>/`` either under the shared layout
  ``{train,dev,test}.conllu`` or under the release names ``<code>-ud-<split>.conllu``;
* a missing split is downloaded from the treebank's official GitHub repository
  (``UniversalDependencies/UD_<Language>-<Name>``) at a named UD release tag
  (:data:`DEFAULT_RELEASE`, ``$NEURALPARSE_UD_RELEASE`` or the ``release`` argument), checked
  against the SHA-256 sum that :mod:`neuralparse.ud_checksums` holds for that release, and only
  then moved into place, so that an interrupted, corrupt or unexpected download never leaves a
  file behind. A file whose sum we do not know is checked to parse as CoNLL-U with
  :func:`neuralparse.io.read_conllu` instead and kept with an :class:`UnverifiedDownloadWarning`,
  or refused when asked (``unverified="refuse"``, ``$NEURALPARSE_UD_UNVERIFIED=refuse``). The
  URL, release and sum of every download are recorded in ``<UD_dir>/downloads.json``.

Nothing here touches the network unless :func:`treebank_paths` (or :func:`download_split`) is
asked for a split that is not on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from tqdm import tqdm

from neuralparse import ud_checksums
from neuralparse.errors import InputError

SPLITS: tuple[str, ...] = ("train", "dev", "test")
ENV_DATA_ROOT = "NEURALPARSE_DATA"
ENV_BASE_URL = "NEURALPARSE_UD_BASE_URL"
ENV_RELEASE = "NEURALPARSE_UD_RELEASE"
ENV_UNVERIFIED = "NEURALPARSE_UD_UNVERIFIED"
DEFAULT_BASE_URL = "https://raw.githubusercontent.com/UniversalDependencies"
# A release tag, not "master": the branch moves with every release, so the same command would
# fetch other files after the next one, and no sum could be kept for them. r2.17 is the release
# of the shared treebanks (see neuralparse.ud_checksums).
DEFAULT_RELEASE = "r2.17"
UNVERIFIED_POLICIES = ("warn", "refuse")
DOWNLOAD_RECORD = "downloads.json"
DEFAULT_TIMEOUT_S = 60.0
UD_GITHUB = "https://github.com/UniversalDependencies"

_REPO_ROOT = Path(__file__).resolve().parent.parent
_SHARED_RELATIVE = Path("..") / "shared" / "data" / "ud"
_CHUNK_BYTES = 1 << 20
# What a failed connection, a timeout or a broken reply raise (URLError wraps connect errors).
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError)


class DatasetError(InputError):
    """A treebank that cannot be found, downloaded or verified; the message says what to do."""


class UnverifiedDownloadWarning(UserWarning):
    """A downloaded file was kept although no known SHA-256 sum could confirm its content."""


# --------------------------------------------------------------------------------------------
# Treebank registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Treebank:
    """One UD treebank: its repository/directory name and its release file prefix.

    ``splits`` are the splits its release has (some treebanks are test only, some have no dev).
    ``splits_known`` is False for treebanks outside the registry, whose splits we can only
    discover by asking. ``multipart`` lists splits the release may ship as several files
    ``<code>-ud-<split>-*.conllu`` (files over GitHub's size limit), which are not fetched
    automatically.
    """

    ud_dir: str
    code: str | None
    splits: tuple[str, ...] = SPLITS
    splits_known: bool = True
    multipart: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``Language-Name`` without the ``UD_`` prefix."""
        return self.ud_dir.removeprefix("UD_")

    def release_file(self, split: str) -> str:
        """Release file name of ``split``, e.g. ``en_ewt-ud-train.conllu``."""
        if self.code is None:
            raise DatasetError(
                f"the release file prefix of {self.ud_dir} is unknown; give it explicitly "
                f"(argument code=..., or data.code=... in the config), e.g. 'xx_name' for "
                f"files xx_name-ud-{split}.conllu"
            )
        return f"{self.code}-ud-{split}.conllu"


def _registry(entries: Iterable[Treebank]) -> Mapping[str, Treebank]:
    """Index treebanks by lower-cased directory name, short name and code (read-only)."""
    index: dict[str, Treebank] = {}
    for treebank in entries:
        keys = [treebank.ud_dir.lower(), treebank.name.lower()]
        if treebank.code is not None:
            keys.append(treebank.code.lower())
        for key in keys:
            if key in index:
                raise ValueError(f"duplicate treebank key {key!r} in the registry")
            index[key] = treebank
    return MappingProxyType(index)


_TRAIN_TEST = ("train", "test")
_TEST_ONLY = ("test",)

KNOWN_TREEBANKS: Mapping[str, Treebank] = _registry(
    [
        # The five shared treebanks (../shared/data/ud).
        Treebank("UD_English-EWT", "en_ewt"),
        Treebank("UD_Turkish-IMST", "tr_imst"),
        Treebank("UD_Greek-GDT", "el_gdt"),
        Treebank("UD_Hungarian-Szeged", "hu_szeged"),
        Treebank("UD_Gothic-PROIEL", "got_proiel"),
        # Other frequently used treebanks with train/dev/test.
        Treebank("UD_English-GUM", "en_gum"),
        Treebank("UD_English-LinES", "en_lines"),
        Treebank("UD_German-GSD", "de_gsd"),
        Treebank("UD_German-HDT", "de_hdt", multipart=("train",)),
        Treebank("UD_French-GSD", "fr_gsd"),
        Treebank("UD_French-Sequoia", "fr_sequoia"),
        Treebank("UD_Czech-PDT", "cs_pdt", multipart=("train",)),
        Treebank("UD_Czech-CAC", "cs_cac"),
        Treebank("UD_Russian-SynTagRus", "ru_syntagrus", multipart=("train",)),
        Treebank("UD_Russian-GSD", "ru_gsd"),
        Treebank("UD_Dutch-Alpino", "nl_alpino"),
        Treebank("UD_Dutch-LassySmall", "nl_lassysmall"),
        Treebank("UD_Ancient_Greek-PROIEL", "grc_proiel"),
        Treebank("UD_Ancient_Greek-Perseus", "grc_perseus"),
        Treebank("UD_Latin-PROIEL", "la_proiel"),
        Treebank("UD_Latin-ITTB", "la_ittb"),
        Treebank("UD_Old_Church_Slavonic-PROIEL", "cu_proiel"),
        Treebank("UD_Arabic-PADT", "ar_padt"),
        Treebank("UD_Hebrew-HTB", "he_htb"),
        Treebank("UD_Persian-Seraji", "fa_seraji"),
        Treebank("UD_Chinese-GSD", "zh_gsd"),
        Treebank("UD_Japanese-GSD", "ja_gsd"),
        Treebank("UD_Korean-Kaist", "ko_kaist"),
        Treebank("UD_Korean-GSD", "ko_gsd"),
        Treebank("UD_Hindi-HDTB", "hi_hdtb"),
        Treebank("UD_Urdu-UDTB", "ur_udtb"),
        Treebank("UD_Spanish-AnCora", "es_ancora"),
        Treebank("UD_Spanish-GSD", "es_gsd"),
        Treebank("UD_Catalan-AnCora", "ca_ancora"),
        Treebank("UD_Italian-ISDT", "it_isdt"),
        Treebank("UD_Portuguese-Bosque", "pt_bosque"),
        Treebank("UD_Romanian-RRT", "ro_rrt"),
        Treebank("UD_Finnish-TDT", "fi_tdt"),
        Treebank("UD_Estonian-EDT", "et_edt"),
        Treebank("UD_Swedish-Talbanken", "sv_talbanken"),
        Treebank("UD_Danish-DDT", "da_ddt"),
        Treebank("UD_Norwegian-Bokmaal", "no_bokmaal"),
        Treebank("UD_Norwegian-Nynorsk", "no_nynorsk"),
        Treebank("UD_Polish-PDB", "pl_pdb"),
        Treebank("UD_Bulgarian-BTB", "bg_btb"),
        Treebank("UD_Croatian-SET", "hr_set"),
        Treebank("UD_Slovenian-SSJ", "sl_ssj"),
        Treebank("UD_Ukrainian-IU", "uk_iu"),
        Treebank("UD_Latvian-LVTB", "lv_lvtb"),
        Treebank("UD_Irish-IDT", "ga_idt"),
        Treebank("UD_Basque-BDT", "eu_bdt"),
        Treebank("UD_Indonesian-GSD", "id_gsd"),
        Treebank("UD_Vietnamese-VTB", "vi_vtb"),
        # Small treebanks released without a dev split.
        Treebank("UD_Kazakh-KTB", "kk_ktb", splits=_TRAIN_TEST),
        Treebank("UD_Buryat-BDT", "bxr_bdt", splits=_TRAIN_TEST),
        Treebank("UD_Upper_Sorbian-UFAL", "hsb_ufal", splits=_TRAIN_TEST),
        # Parallel UD (PUD) treebanks: test only.
        Treebank("UD_English-PUD", "en_pud", splits=_TEST_ONLY),
        Treebank("UD_German-PUD", "de_pud", splits=_TEST_ONLY),
        Treebank("UD_French-PUD", "fr_pud", splits=_TEST_ONLY),
        Treebank("UD_Swedish-PUD", "sv_pud", splits=_TEST_ONLY),
        Treebank("UD_Finnish-PUD", "fi_pud", splits=_TEST_ONLY),
    ]
)


def resolve_treebank(name: str, code: str | None = None) -> Treebank:
    """The treebank called ``name``: ``UD_English-EWT``, ``English-EWT`` or ``en_ewt``.

    Names are matched case-insensitively against the registry. A treebank outside it is accepted
    by its directory name (``UD_Language-Name`` or ``Language-Name``); its release prefix
    ``code`` is then needed only to find release-named files or to download. An explicit ``code``
    also overrides the registry's.
    """
    key = name.strip()
    if not key:
        raise DatasetError("empty treebank name; expected e.g. 'UD_English-EWT' or 'en_ewt'")
    known = KNOWN_TREEBANKS.get(key.lower())
    if known is not None:
        return known if code is None or code == known.code else replace(known, code=code)
    if "-" not in key:
        raise DatasetError(
            f"unknown treebank {name!r}: not in the registry of "
            f"{len(set(KNOWN_TREEBANKS.values()))} UD treebanks; give its directory name "
            f"'UD_<Language>-<Name>' together with its file prefix (code=..., data.code=...)"
        )
    ud_dir = "UD_" + key[3:] if key.lower().startswith("ud_") else "UD_" + key
    return Treebank(ud_dir, code, splits=SPLITS, splits_known=False)


def known_treebanks() -> list[Treebank]:
    """Every treebank of the registry, sorted by directory name."""
    return sorted(set(KNOWN_TREEBANKS.values()), key=lambda treebank: treebank.ud_dir)


# --------------------------------------------------------------------------------------------
# Data root
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RootCandidate:
    """One place the data root may come from, in priority order (see :func:`data_root`)."""

    source: str
    path: Path | None
    applies: bool
    note: str
    # Downloads may be written here; never into the shared directory, which is read-only input
    # shared by several checkouts.
    takes_downloads: bool


def _cache_root(environ: Mapping[str, str]) -> Path:
    cache_home = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home).expanduser() / "neuralparse" / "ud"


def data_root_candidates(
    override: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    repo_root: Path | None = None,
    cwd: Path | None = None,
) -> list[RootCandidate]:
    """Every candidate data root, highest priority first, with whether it applies.

    The override and ``$NEURALPARSE_DATA`` apply whenever they are set (the directory is created
    on download); a shared directory applies only when it exists; the cache always applies.
    ``environ``, ``repo_root`` and ``cwd`` default to the process's own (they exist for tests).
    """
    environ = os.environ if environ is None else environ
    repo_root = _REPO_ROOT if repo_root is None else repo_root
    cwd = Path.cwd() if cwd is None else cwd
    candidates: list[RootCandidate] = []

    override_text = "" if override is None else os.fspath(override).strip()
    candidates.append(
        RootCandidate(
            "override (data.root)",
            Path(override_text).expanduser() if override_text else None,
            bool(override_text),
            "set" if override_text else "not set",
            takes_downloads=True,
        )
    )
    env_text = environ.get(ENV_DATA_ROOT, "").strip()
    candidates.append(
        RootCandidate(
            f"${ENV_DATA_ROOT}",
            Path(env_text).expanduser() if env_text else None,
            bool(env_text),
            "set" if env_text else "not set",
            takes_downloads=True,
        )
    )
    seen: set[Path] = set()
    for label, base in (("repository", repo_root), ("current directory", cwd)):
        shared = (base / _SHARED_RELATIVE).resolve()
        if shared in seen:
            continue
        seen.add(shared)
        exists = shared.is_dir()
        candidates.append(
            RootCandidate(
                f"shared data next to the {label}",
                shared,
                exists,
                "exists" if exists else "does not exist",
                takes_downloads=False,
            )
        )
    candidates.append(
        RootCandidate("user cache", _cache_root(environ), True, "fallback", takes_downloads=True)
    )
    return candidates


def data_root(
    override: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    repo_root: Path | None = None,
    cwd: Path | None = None,
) -> Path:
    """The UD data root: override > ``$NEURALPARSE_DATA`` > ``../shared/data/ud`` > cache."""
    candidates = data_root_candidates(override, environ=environ, repo_root=repo_root, cwd=cwd)
    return _first_applicable(candidates, for_downloads=False)


def download_root(
    override: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    repo_root: Path | None = None,
    cwd: Path | None = None,
) -> Path:
    """Where downloads go: like :func:`data_root`, but skipping the read-only shared directory."""
    candidates = data_root_candidates(override, environ=environ, repo_root=repo_root, cwd=cwd)
    return _first_applicable(candidates, for_downloads=True)


def _first_applicable(candidates: Sequence[RootCandidate], *, for_downloads: bool) -> Path:
    for candidate in candidates:
        usable = candidate.takes_downloads or not for_downloads
        if candidate.applies and usable and candidate.path is not None:
            return candidate.path
    raise AssertionError("the user cache candidate always applies")  # pragma: no cover


def explain_data_root(
    override: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    repo_root: Path | None = None,
    cwd: Path | None = None,
) -> str:
    """Where :func:`data_root` looked, in order, and which candidate won (for messages)."""
    candidates = data_root_candidates(override, environ=environ, repo_root=repo_root, cwd=cwd)
    lines = ["data root, first that applies wins:"]
    chosen = False
    for rank, candidate in enumerate(candidates, start=1):
        where = "" if candidate.path is None else f" {candidate.path}"
        marker = ""
        if candidate.applies and not chosen:
            marker, chosen = "  <- used", True
        lines.append(f"  {rank}. {candidate.source}:{where} ({candidate.note}){marker}")
    lines.append(f"downloads go to {_first_applicable(candidates, for_downloads=True)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Local layout
# --------------------------------------------------------------------------------------------


def treebank_dir(root: Path, treebank: Treebank) -> Path:
    """``<root>/<UD_dir>``, matching an existing directory case-insensitively."""
    exact = root / treebank.ud_dir
    if exact.is_dir() or not root.is_dir():
        return exact
    wanted = treebank.ud_dir.lower()
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and entry.name.lower() == wanted:
            return entry
    return exact


def _release_glob(treebank: Treebank, suffix: str) -> str:
    return f"{treebank.code or '*'}-ud-{suffix}.conllu"


def find_local_split(treebank: Treebank, split: str, root: Path) -> Path | None:
    """The file of ``split`` under ``root`` in either layout, or None.

    Looks for ``<split>.conllu`` (shared layout), then the release name
    ``<code>-ud-<split>.conllu`` (any prefix when the code is unknown, if exactly one matches),
    Never writes: a split present only as release parts ``<code>-ud-<split>-*.conllu`` raises
    :class:`DatasetError` asking for them to be joined into ``<split>.conllu``.
    """
    directory = treebank_dir(root, treebank)
    if not directory.is_dir():
        return None
    shared = directory / f"{split}.conllu"
    if shared.is_file():
        return shared
    release = sorted(directory.glob(_release_glob(treebank, split)))
    if len(release) == 1:
        return release[0]
    if len(release) > 1:
        raise DatasetError(
            f"several release files for the {split} split in {directory}: "
            f"{', '.join(p.name for p in release)}; give the treebank's code to pick one"
        )
    parts = sorted(directory.glob(_release_glob(treebank, f"{split}-*")))
    if parts:
        raise DatasetError(
            f"the {split} split of {treebank.ud_dir} is present only as release parts "
            f"({', '.join(p.name for p in parts)}); join them into one file: "
            f"cd {directory} && cat {' '.join(p.name for p in parts)} > {shared.name}"
        )
    return None


# --------------------------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------------------------


def base_url(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """Base URL of the raw UD files: argument > ``$NEURALPARSE_UD_BASE_URL`` > GitHub."""
    environ = os.environ if environ is None else environ
    chosen = explicit or environ.get(ENV_BASE_URL, "").strip() or DEFAULT_BASE_URL
    return chosen.rstrip("/")


def ud_release(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The UD release tag to download: argument > ``$NEURALPARSE_UD_RELEASE`` > ``r2.17``.

    Any tag or branch of the UD repositories is accepted (``r2.15``, ``dev``); only the releases
    in :mod:`neuralparse.ud_checksums` can be verified.
    """
    environ = os.environ if environ is None else environ
    return (explicit or "").strip() or environ.get(ENV_RELEASE, "").strip() or DEFAULT_RELEASE


def unverified_policy(
    explicit: str | None = None, environ: Mapping[str, str] | None = None
) -> Literal["warn", "refuse"]:
    """What to do with a file whose SHA-256 sum is unknown: argument >
    ``$NEURALPARSE_UD_UNVERIFIED`` > ``warn`` (download it with a warning); ``refuse`` fails."""
    environ = os.environ if environ is None else environ
    chosen = (explicit or environ.get(ENV_UNVERIFIED, "")).strip().lower() or "warn"
    if chosen == "warn":
        return "warn"
    if chosen == "refuse":
        return "refuse"
    raise DatasetError(
        f"unknown choice {chosen!r} for downloads without a known SHA-256 sum "
        f"(${ENV_UNVERIFIED} or unverified=...); expected one of {', '.join(UNVERIFIED_POLICIES)}"
    )


def known_sha256(treebank: Treebank, split: str, release: str) -> str | None:
    """The SHA-256 sum of the release file of ``split`` at tag ``release``, None if unknown."""
    if treebank.code is None:
        return None
    by_code = ud_checksums.UD_RELEASE_SHA256.get(release, {})
    return by_code.get(treebank.code, {}).get(split)


def split_url(
    treebank: Treebank, split: str, *, base: str | None = None, release: str | None = None
) -> str:
    """URL of a release file: ``<base>/<UD_dir>/<release>/<code>-ud-<split>.conllu``."""
    tag = ud_release(release)
    return f"{base_url(base)}/{treebank.ud_dir}/{tag}/{treebank.release_file(split)}"


def _manual_instructions(
    treebank: Treebank, split: str, destination: Path, release: str, expected: str | None
) -> str:
    source = f"{UD_GITHUB}/{treebank.ud_dir}/tree/{release}"
    release_file = treebank.release_file(split) if treebank.code else f"<code>-ud-{split}.conllu"
    checksum = f" (SHA-256 {expected})" if expected else ""
    return (
        f"To install it by hand, download {release_file}{checksum} from {source} and save it "
        f"as {destination}; or point ${ENV_DATA_ROOT} (or data.root=...) at a directory "
        f"holding {treebank.ud_dir}/{split}.conllu."
    )


@contextlib.contextmanager
def _atomic_destination(destination: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``destination``; rename it into place only on success."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(
        dir=destination.parent, prefix=f".{destination.name}.", suffix=".part"
    )
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, destination)
    finally:
        temporary.unlink(missing_ok=True)


def _fetch(url: str, target: Path, *, timeout: float, progress: bool, label: str) -> str:
    """Stream ``url`` into ``target`` with a byte progress bar on stderr; return its SHA-256."""
    request = urllib.request.Request(url, headers={"User-Agent": "neuralparse"})
    digest = hashlib.sha256()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        written = 0
        with (
            target.open("wb") as out,
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=label,
                file=sys.stderr,
                disable=not progress,
                leave=False,
            ) as bar,
        ):
            while chunk := response.read(_CHUNK_BYTES):
                out.write(chunk)
                digest.update(chunk)
                written += len(chunk)
                bar.update(len(chunk))
    if total is not None and written != total:
        raise DatasetError(f"the download was cut short ({written} of {total} bytes)")
    return digest.hexdigest()


def _verify_conllu(path: Path) -> int:
    """Parse a downloaded file with neuralparse.io; return its number of sentences."""
    # Imported here: reading CoNLL-U is only needed once something was downloaded.
    from neuralparse.io import read_conllu

    try:
        sentences = read_conllu(path)
    except ValueError as error:  # InputError, and decoding errors, are ValueErrors
        detail = getattr(error, "reason", str(error))
        line = getattr(error, "line", None)
        where = f" (line {line})" if line is not None else ""
        raise DatasetError(
            f"the downloaded file is not valid CoNLL-U{where}: {detail}; it was not kept"
        ) from error
    if not sentences:
        raise DatasetError("the downloaded file holds no sentence; it was not kept")
    return len(sentences)


def _record_download(destination: Path, entry: Mapping[str, str | bool]) -> Path:
    """Add ``entry`` (URL, release, sum) for ``destination`` to its directory's
    :data:`DOWNLOAD_RECORD`, written atomically; return the record's path."""
    record = destination.parent / DOWNLOAD_RECORD
    try:
        entries = json.loads(record.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        entries = {}
    if not isinstance(entries, dict):  # not ours: start a new record rather than fail
        entries = {}
    entries[destination.name] = dict(entry)
    with _atomic_destination(record) as temporary:
        temporary.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n", "utf-8")
    return record


class _SplitNotFound(DatasetError):
    """The server has no file for this split (HTTP 404)."""


def download_split(
    treebank: Treebank,
    split: str,
    root: Path,
    *,
    base: str | None = None,
    release: str | None = None,
    unverified: Literal["warn", "refuse"] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    progress: bool = True,
) -> Path:
    """Download one split of UD release ``release`` into ``<root>/<UD_dir>/<split>.conllu``.

    The bytes go to a temporary file beside the destination, which is renamed into place only
    once verified: its SHA-256 must equal the sum :mod:`neuralparse.ud_checksums` holds for the
    file at that release (a mismatch raises :class:`DatasetError` naming the file and both sums).
    A file without a known sum is checked to parse with :func:`neuralparse.io.read_conllu` and
    kept with an :class:`UnverifiedDownloadWarning` giving the sum it got, or, with the policy
    ``refuse`` (:func:`unverified_policy`), not downloaded at all. On any failure nothing is
    left behind. URL, release, sum and whether it was verified go to ``<UD_dir>/downloads.json``.
    Network and HTTP failures raise :class:`DatasetError` naming the URL and where to put the
    file by hand.
    """
    release = ud_release(release)
    policy = unverified_policy(unverified)
    destination = treebank_dir(root, treebank) / f"{split}.conllu"
    url = split_url(treebank, split, base=base, release=release)
    expected = known_sha256(treebank, split, release)
    manual = _manual_instructions(treebank, split, destination, release, expected)
    if expected is None and policy == "refuse":
        raise DatasetError(
            f"no known SHA-256 sum for the {split} file of {treebank.ud_dir} at release "
            f"{release}, and unverifiable downloads are refused ({ENV_UNVERIFIED}=refuse or "
            f"unverified='refuse'); allow them with {ENV_UNVERIFIED}=warn. {manual}",
            source=url,
        )
    try:
        with _atomic_destination(destination) as temporary:
            actual = _fetch(
                url, temporary, timeout=timeout, progress=progress, label=destination.name
            )
            if expected is None:
                _verify_conllu(temporary)
            elif actual != expected:
                raise DatasetError(
                    f"SHA-256 mismatch for {treebank.release_file(split)} of release {release}: "
                    f"expected {expected}, got {actual}; nothing was saved to {destination}. "
                    f"The server sent another file than the released one (a moved tag, or a "
                    f"mirror with another version)."
                )
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise _SplitNotFound(
                f"not found (HTTP 404): {_why_not_found(treebank, split, release)} {manual}",
                source=url,
            ) from error
        raise DatasetError(
            f"download failed: HTTP {error.code} {error.reason}. {manual}", source=url
        ) from error
    except _NETWORK_ERRORS as error:
        reason = getattr(error, "reason", error)
        raise DatasetError(
            f"could not download ({reason}); are you offline? {manual}", source=url
        ) from error
    except DatasetError as error:
        raise DatasetError(f"{error.reason} {manual}", source=url) from error
    except OSError as error:
        raise DatasetError(
            f"could not save the download to {destination} ({error}). {manual}", source=url
        ) from error
    verified = expected is not None
    entry = {"url": url, "release": release, "sha256": actual, "verified": verified}
    record = _record_download(destination, entry)
    if not verified:
        warnings.warn(
            f"{destination} could not be verified: no SHA-256 sum of the {split} file of "
            f"{treebank.ud_dir} is known for release {release}. It was downloaded from {url} "
            f"and kept with SHA-256 {actual} (recorded in {record}); check it before relying "
            f"on it, or set {ENV_UNVERIFIED}=refuse to refuse such files.",
            UnverifiedDownloadWarning,
            stacklevel=2,
        )
    return destination


def _why_not_found(treebank: Treebank, split: str, release: str) -> str:
    if split in treebank.multipart:
        return (
            f"the {split} split of {treebank.ud_dir} is released as several files "
            f"{_release_glob(treebank, f'{split}-*')}, which are not fetched automatically; "
            f"download them all and concatenate them in name order."
        )
    if not treebank.splits_known:
        return (
            f"{treebank.ud_dir} may have no {split} split, or its code "
            f"{treebank.code!r} or the release {release} may be wrong."
        )
    return (
        f"{treebank.ud_dir} may have no tag {release} (a treebank first released later has "
        f"none; see {UD_GITHUB}/{treebank.ud_dir}/tags), or its repository may have changed."
    )


def _lookup_roots(root: str | os.PathLike[str] | None) -> list[Path]:
    """Roots searched for existing files, the download root last.

    An explicit root is the only one. Otherwise the data root comes first and the download
    root (different when the data root is the read-only shared directory) second, so that a
    treebank downloaded once is found again.
    """
    if root is not None:
        return [Path(root).expanduser()]
    roots = [data_root()]
    target = download_root()
    if target not in roots:
        roots.append(target)
    return roots


def treebank_paths(
    name: str,
    root: str | os.PathLike[str] | None = None,
    splits: Sequence[str] = SPLITS,
    download: bool = True,
    *,
    code: str | None = None,
    base: str | None = None,
    release: str | None = None,
    unverified: Literal["warn", "refuse"] | None = None,
    missing: Literal["error", "skip"] = "error",
    timeout: float = DEFAULT_TIMEOUT_S,
    progress: bool = True,
) -> dict[str, Path]:
    """Paths of the requested splits of treebank ``name``, downloading absent ones.

    ``root`` is the data root (default :func:`data_root`; the Hydra override ``data.root``
    passes it here). Splits that the treebank's release does not have (test-only treebanks, no
    dev) raise :class:`DatasetError` with ``missing="error"`` and are left out of the result with
    ``missing="skip"``. With ``download=False`` an absent file raises instead of downloading.
    Downloads come from UD release ``release`` (:func:`ud_release`) and are verified as
    :func:`download_split` says, ``unverified`` deciding about files without a known sum.
    Files already on disk are used as they are.
    """
    treebank = resolve_treebank(name, code)
    release = ud_release(release)
    unknown = [split for split in splits if split not in SPLITS]
    if unknown:
        raise DatasetError(f"unknown split(s) {unknown}; expected some of {list(SPLITS)}")
    absent = [split for split in splits if split not in treebank.splits]
    if absent and missing == "error":
        raise DatasetError(
            f"{treebank.ud_dir} has no {'/'.join(absent)} split in its UD release "
            f"(it has {'/'.join(treebank.splits)}); choose another treebank or split"
        )
    wanted = [split for split in splits if split in treebank.splits]

    roots = _lookup_roots(root)
    found: dict[str, Path] = {}
    for split in wanted:
        for candidate_root in roots:
            path = find_local_split(treebank, split, candidate_root)
            if path is not None:
                found[split] = path
                break
    to_fetch = [split for split in wanted if split not in found]
    if to_fetch and not download:
        first = to_fetch[0]
        raise DatasetError(
            f"{treebank.ud_dir}: no {'/'.join(to_fetch)} file under "
            f"{' or '.join(str(r) for r in roots)} and downloading is off. "
            + _manual_instructions(
                treebank,
                first,
                treebank_dir(roots[-1], treebank) / f"{first}.conllu",
                release,
                known_sha256(treebank, first, release),
            )
            + ("" if root is not None else "\n" + explain_data_root())
        )
    if to_fetch:
        target = roots[-1]
        for split in to_fetch:
            try:
                found[split] = download_split(
                    treebank,
                    split,
                    target,
                    base=base,
                    release=release,
                    unverified=unverified,
                    timeout=timeout,
                    progress=progress,
                )
            except _SplitNotFound:
                # Only a treebank outside the registry may legitimately lack a split.
                if missing == "skip" and not treebank.splits_known:
                    continue
                raise
    return {split: found[split] for split in splits if split in found}
