"""Where treebanks live on disk: the data root, in order of priority an explicit override,
``$NEURALPARSE_DATA``, ``../shared/data/ud`` next to the repository or the current directory,
and the user cache (:func:`data_root`; downloads never go into the read-only shared directory,
:func:`download_root`), and a treebank's split files under it in the shared layout
``<UD_dir>/<split>.conllu`` or under their release names (:func:`find_local_split`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

from neuralparse.datasets.treebanks import DatasetError, Treebank

ENV_DATA_ROOT = "NEURALPARSE_DATA"

_REPO_ROOT = Path(__file__).resolve().parents[2]
_SHARED_RELATIVE = Path("..") / "shared" / "data" / "ud"

PathOverride = str | os.PathLike[str] | None
"""An explicit data root (Hydra ``data.root=...``), or ``None``."""


class RootPlaces(TypedDict, total=False):
    """What :func:`data_root_candidates` reads instead of the process's own (for tests)."""

    environ: Mapping[str, str] | None
    repo_root: Path | None
    cwd: Path | None


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


def data_root(override: PathOverride = None, **places: Unpack[RootPlaces]) -> Path:
    """The UD data root: override > ``$NEURALPARSE_DATA`` > ``../shared/data/ud`` > cache
    (``places``: see :func:`data_root_candidates`)."""
    return _first_applicable(data_root_candidates(override, **places), for_downloads=False)


def download_root(override: PathOverride = None, **places: Unpack[RootPlaces]) -> Path:
    """Where downloads go: like :func:`data_root`, but skipping the read-only shared directory."""
    return _first_applicable(data_root_candidates(override, **places), for_downloads=True)


def _first_applicable(candidates: Sequence[RootCandidate], *, for_downloads: bool) -> Path:
    for candidate in candidates:
        usable = candidate.takes_downloads or not for_downloads
        if candidate.applies and usable and candidate.path is not None:
            return candidate.path
    raise AssertionError("the user cache candidate always applies")  # pragma: no cover


def explain_data_root(override: PathOverride = None, **places: Unpack[RootPlaces]) -> str:
    """Where :func:`data_root` looked, in order, and which candidate won (for messages)."""
    candidates = data_root_candidates(override, **places)
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


def find_local_split(treebank: Treebank, split: str, root: Path) -> tuple[Path, ...]:
    """The file or files of ``split`` under ``root`` in either layout; ``()`` when absent.

    Looks for ``<split>.conllu`` (shared layout), then the release name
    ``<code>-ud-<split>.conllu`` (any prefix when the code is unknown, if exactly one matches),
    then the release parts ``<code>-ud-<split>-*.conllu`` in name order: treebanks larger than
    GitHub's file size limit (the train splits of UD_Czech-PDT, UD_German-HDT,
    UD_Russian-SynTagRus) are released in parts, which are read one after the other, so that
    every message still names the part file and its line.  Never writes.
    """
    directory = treebank_dir(root, treebank)
    if not directory.is_dir():
        return ()
    shared = directory / f"{split}.conllu"
    if shared.is_file():
        return (shared,)
    release = sorted(directory.glob(treebank.release_glob(split)))
    if len(release) == 1:
        return (release[0],)
    if len(release) > 1:
        raise DatasetError(
            f"several release files for the {split} split in {directory}: "
            f"{', '.join(p.name for p in release)}; give the treebank's code to pick one"
        )
    return tuple(sorted(directory.glob(treebank.release_glob(f"{split}-*"))))
