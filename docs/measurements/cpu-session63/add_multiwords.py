"""Add the training treebank's multiword tokens to a copy of a checkpoint trained before
training stored them (what training now stores: a function of the training file alone).

    python docs/measurements/cpu-session63/add_multiwords.py CHECKPOINT TRAIN.conllu OUT
"""

from __future__ import annotations

import sys

from neuralparse.io import read_conllu
from neuralparse.io.multiword import MultiwordLexicon
from neuralparse.runtime.checkpoint import load_checkpoint, save_checkpoint


def main() -> None:
    checkpoint, train, out = sys.argv[1:]
    data = load_checkpoint(checkpoint)
    lexicon = MultiwordLexicon.from_sentences(read_conllu(train))
    data["multiword_tokens"] = lexicon.to_dict()
    save_checkpoint(out, data)
    print(f"{out}: {len(lexicon)} multiword token forms from {train}")


if __name__ == "__main__":
    main()
