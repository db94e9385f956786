"""Downloading a split of a UD treebank release, verified before it is kept.

A missing split is downloaded from the treebank's official GitHub repository
(``UniversalDependencies/UD_<Language>-<Name>``) at a named UD release tag
(:data:`DEFAULT_RELEASE`, ``$NEURALPARSE_UD_RELEASE`` or the ``release`` argument), checked
against the SHA-256 sum that :mod:`neuralparse.ud_checksums` holds for that release, and only
then moved into place, so that an interrupted, corrupt or unexpected download never leaves a
file behind. A file whose sum we do not know is checked to parse as CoNLL-U with
:func:`neuralparse.io.read_conllu` instead and kept with an :class:`UnverifiedDownloadWarning`,
or refused when asked (``unverified="refuse"``, ``$NEURALPARSE_UD_UNVERIFIED=refuse``). The
URL, release and sum of every download are recorded in ``<UD_dir>/downloads.json``.
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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from tqdm import tqdm

from neuralparse import ud_checksums
from neuralparse.datasets.roots import ENV_DATA_ROOT, treebank_dir
from neuralparse.datasets.treebanks import DatasetError, Treebank

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

_CHUNK_BYTES = 1 << 20
# What a failed connection, a timeout or a broken reply raise (URLError wraps connect errors).
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError)


class UnverifiedDownloadWarning(UserWarning):
    """A downloaded file was kept although no known SHA-256 sum could confirm its content."""


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


def manual_instructions(
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


class SplitNotFound(DatasetError):
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
    manual = manual_instructions(treebank, split, destination, release, expected)
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
            raise SplitNotFound(
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
            f"{treebank.release_glob(f'{split}-*')}, which are not fetched automatically; "
            f"download them all into the treebank's directory (they are read in name order)."
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
