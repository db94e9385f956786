"""Add what training now learns of raw-text segmentation (the training treebank's multiword
tokens and sentence splitter, a function of the training file alone) to a copy of a
checkpoint trained before training stored it.

    python docs/measurements/cpu-session63/add_segmentation.py CHECKPOINT TRAIN.conllu OUT
"""

from __future__ import annotations

import sys

from neuralparse.io import read_conllu
from neuralparse.runtime.checkpoint import load_checkpoint, save_checkpoint
from neuralparse.training.preparation import learn_segmentation


def main() -> None:
    checkpoint, train, out = sys.argv[1:]
    data = load_checkpoint(checkpoint)
    segmentation = learn_segmentation(read_conllu(train))
    data["multiword_tokens"] = segmentation.multiwords.to_dict()
    data["sentence_splitter"] = segmentation.sentences.to_dict() if segmentation.sentences else {}
    save_checkpoint(out, data)
    print(f"{out}: {len(segmentation.multiwords)} multiword token forms from {train}")


if __name__ == "__main__":
    main()
