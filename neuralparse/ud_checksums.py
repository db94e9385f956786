"""SHA-256 sums of Universal Dependencies release files, which :mod:`neuralparse.datasets` checks
every download against.

:data:`UD_RELEASE_SHA256` maps a release tag of the UD treebank repositories (``r2.17``), then a
treebank's release file prefix (``en_ewt``) and a split, to the sum of the release file
``<code>-ud-<split>.conllu`` (``en_ewt-ud-train.conllu`` in ``UD_English-EWT`` at tag ``r2.17``).
A file missing from the table can still be downloaded, but not verified (see
:func:`neuralparse.datasets.download_split`).

The ``r2.17`` sums are those of the five treebanks in ``../shared/data/ud``: unmodified release
files copied from the UD repositories (``MANIFEST.tsv`` there lists the commits and the same
sums). They are the release-2.17 files as far as the treebanks' own READMEs tell: the latest
changelog entries of Greek-GDT and Hungarian-Szeged are v2.17 (and their 2.17 changes are in
the data), and English-EWT (v2.16), Turkish-IMST (v2.13) and Gothic-PROIEL (v2.10) record no
later change. They were not compared with what GitHub serves for the tag (no network where they
were recorded); a first download of one of these files does that, and a mismatch stops it. A
release is added by downloading its files by tag and recording ``sha256sum`` of each.
"""

from __future__ import annotations

from collections.abc import Mapping

UD_RELEASE_SHA256: Mapping[str, Mapping[str, Mapping[str, str]]] = {
    "r2.17": {
        "el_gdt": {
            "train": "892cd36cd47372ec0d7ccdbc874af9a6994651cdb0cf2cee6ba93bb01ee83794",
            "dev": "53de54735051eecef04aa8c0f5f0fbf2466e0e0d4fd9dfd3d313560c394ddf41",
            "test": "30cb5881ce6f8ba628de88853a4c105e716a365e8fcd9024a85befe41165c260",
        },
        "en_ewt": {
            "train": "3fb78e2b55482c8ee00caa653af436c88c9e5bc9a73ce26e4ae3ddc79d2b7e7b",
            "dev": "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
            "test": "e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
        },
        "got_proiel": {
            "train": "328b605afa4d7f962e5840eb820723ce661b24ded68dfee482d590defe850639",
            "dev": "2a6da7a646813641b684a431e8befb83a221d148459229bbee099ad250a02c14",
            "test": "1eca87866dd477066ddf7b03239ab3b47a86fc1b32dc33b3dc95307189f12028",
        },
        "hu_szeged": {
            "train": "1e9d02111d6e842ad60d20cccfb43d8f758b4cc311d13e2044af2e285372847a",
            "dev": "8cb5b630e09d5d938ce624b06fe3abe57a631533f5aef186ba533daca6e4ab5b",
            "test": "9031ec98f775ceae6940580a1bb4ef8a2a9e9bee38c40eb9e8ce0f006b56fa59",
        },
        "tr_imst": {
            "train": "8d8b8b581dab9362e6f2e4328aef77b9fabec1d189a199e320ba136710c7bd83",
            "dev": "3bdaab362b7a9af7cbf8944aee5c1c1d077970ad4bcafcf23c5c062d4cf93801",
            "test": "fc9269bd598489b942a025b678779557266ce0c054a843e47c7db386d76d6459",
        },
    },
}
