"""The UD treebanks neuralparse knows by name: :class:`Treebank` (directory, release file
prefix, splits), the registry :data:`KNOWN_TREEBANKS` and :func:`resolve_treebank`, which
accepts a treebank outside it by its directory name; and :class:`DatasetError`, the error of
everything in :mod:`neuralparse.datasets`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from neuralparse.errors import InputError

SPLITS: tuple[str, ...] = ("train", "dev", "test")


class DatasetError(InputError):
    """A treebank that cannot be found, downloaded or verified; the message says what to do."""


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

    def release_glob(self, suffix: str) -> str:
        """The glob of release files named ``<code>-ud-<suffix>.conllu`` (any code when the
        code is unknown)."""
        return f"{self.code or '*'}-ud-{suffix}.conllu"


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
