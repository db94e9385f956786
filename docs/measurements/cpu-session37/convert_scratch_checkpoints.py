"""Scratch: the two English-EWT checkpoints of session 36 that were trained with the arc loss
patched in (arc_loss_scratch_patch.py of cpu-session36) rewritten in the library's layout,
so that experiments.arc_term can parse them.  The arc scorer's head part maps one to one
(dep -> dependent, head -> head, U -> bilinear, u -> head_bias); the relation part, which
decoding never reads, gets the library's relation vocabulary of English-EWT (from a library
checkpoint trained on the same file) and the first rows of the patch's 64-row output layer.

    python convert_scratch_checkpoints.py LIBRARY_EWT_CHECKPOINT SCRATCH_CHECKPOINT OUT
"""

import sys

import torch

library = torch.load(sys.argv[1], weights_only=False, map_location="cpu")
scratch = torch.load(sys.argv[2], weights_only=False, map_location="cpu")
relations = library["vocabularies"]["relations"]
names = {"U": "bilinear", "u": "head_bias", "dep": "dependent", "head": "head"}
names |= {"ldep": "relation_dependent", "lhead": "relation_head", "lout": "relation_out"}
state = {}
for key, value in scratch["state_dict"].items():
    if key.startswith("aux_arcs."):
        first, _, rest = key.removeprefix("aux_arcs.").partition(".")
        key = "arcs." + names[first] + ("." + rest if rest else "")
        if first == "lout":
            value = value[: len(relations["symbols"])]
    state[key] = value
scratch["state_dict"] = state
scratch["vocabularies"]["relations"] = relations
scratch["model"]["config"]["arc_loss_weight"] = 1.0
scratch["config"]["model"]["arc_loss_weight"] = 1.0
torch.save(scratch, sys.argv[3])
