"""Universal Dependencies treebanks: where they live on disk and how to fetch them.

Where the data lives:

* the data root is, in order of priority, an explicit override (Hydra ``data.root=...``), the
  environment variable ``NEURALPARSE_DATA``, ``../shared/data/ud`` next to the repository (or
  next to the current directory) when it exists, and finally ``~/.cache/neuralparse/ud``
  (``$XDG_CACHE_HOME`` respected);
* a treebank lives in ``<root>/UD_<Language>-<Name>/`` either under the shared layout
  ``{train,dev,test}.conllu`` or under the release names ``<code>-ud-<split>.conllu`` (a split
  over GitHub's size limit as parts ``<code>-ud-<split>-*.conllu``, :func:`treebank_files`);
* a missing split is downloaded from the treebank's official GitHub repository at a named UD
  release tag and verified against its known SHA-256 sum (or, without one, checked to parse)
  before it is moved into place (:mod:`neuralparse.datasets.download`).

The treebanks known by name are in :mod:`neuralparse.datasets.treebanks`, the data root and
the layouts in :mod:`neuralparse.datasets.roots`; :func:`treebank_paths` puts them together.

Nothing here touches the network unless :func:`treebank_paths` (or :func:`download_split`) is
asked for a split that is not on disk.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from neuralparse.datasets.download import (
    DEFAULT_BASE_URL,
    DEFAULT_RELEASE,
    DEFAULT_TIMEOUT_S,
    DOWNLOAD_RECORD,
    ENV_BASE_URL,
    ENV_RELEASE,
    ENV_UNVERIFIED,
    UD_GITHUB,
    UNVERIFIED_POLICIES,
    SplitNotFound,
    UnverifiedDownloadWarning,
    base_url,
    download_split,
    known_sha256,
    manual_instructions,
    split_url,
    ud_release,
    unverified_policy,
)
from neuralparse.datasets.roots import (
    ENV_DATA_ROOT,
    RootCandidate,
    RootPlaces,
    data_root,
    data_root_candidates,
    download_root,
    explain_data_root,
    find_local_split,
    treebank_dir,
)
from neuralparse.datasets.treebanks import (
    KNOWN_TREEBANKS,
    SPLITS,
    DatasetError,
    Treebank,
    known_treebanks,
    resolve_treebank,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_RELEASE",
    "DEFAULT_TIMEOUT_S",
    "DOWNLOAD_RECORD",
    "ENV_BASE_URL",
    "ENV_DATA_ROOT",
    "ENV_RELEASE",
    "ENV_UNVERIFIED",
    "KNOWN_TREEBANKS",
    "SPLITS",
    "UD_GITHUB",
    "UNVERIFIED_POLICIES",
    "DatasetError",
    "RootCandidate",
    "RootPlaces",
    "Treebank",
    "UnverifiedDownloadWarning",
    "base_url",
    "data_root",
    "data_root_candidates",
    "download_root",
    "download_split",
    "explain_data_root",
    "find_local_split",
    "known_sha256",
    "known_treebanks",
    "resolve_treebank",
    "split_url",
    "treebank_dir",
    "treebank_files",
    "treebank_paths",
    "ud_release",
    "unverified_policy",
]


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


def treebank_files(
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
) -> dict[str, tuple[Path, ...]]:
    """The files of the requested splits of treebank ``name``, downloading absent ones: one
    file per split, or a split's release parts in name order (:func:`find_local_split`).

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
    found: dict[str, tuple[Path, ...]] = {}
    for split in wanted:
        for candidate_root in roots:
            paths = find_local_split(treebank, split, candidate_root)
            if paths:
                found[split] = paths
                break
    to_fetch = [split for split in wanted if split not in found]
    if to_fetch and not download:
        first = to_fetch[0]
        raise DatasetError(
            f"{treebank.ud_dir}: no {'/'.join(to_fetch)} file under "
            f"{' or '.join(str(r) for r in roots)} and downloading is off. "
            + manual_instructions(
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
                found[split] = (
                    download_split(
                        treebank,
                        split,
                        target,
                        base=base,
                        release=release,
                        unverified=unverified,
                        timeout=timeout,
                        progress=progress,
                    ),
                )
            except SplitNotFound:
                # Only a treebank outside the registry may legitimately lack a split.
                if missing == "skip" and not treebank.splits_known:
                    continue
                raise
    return {split: found[split] for split in splits if split in found}


def treebank_paths(
    name: str,
    root: str | os.PathLike[str] | None = None,
    splits: Sequence[str] = SPLITS,
    download: bool = True,
    **options: Any,
) -> dict[str, Path]:
    """:func:`treebank_files` for callers that read one file per split (evaluation on a test
    file): a split on disk only as release parts raises :class:`DatasetError` saying how to
    join them."""
    paths = {}
    for split, files in treebank_files(name, root, splits, download, **options).items():
        if len(files) > 1:
            directory, joined = files[0].parent, files[0].with_name(f"{split}.conllu")
            raise DatasetError(
                f"the {split} split of {directory.name} is present as release parts "
                f"({', '.join(p.name for p in files)}) and this reads one file; join them: "
                f"cd {directory} && cat {' '.join(p.name for p in files)} > {joined.name}"
            )
        paths[split] = files[0]
    return paths
