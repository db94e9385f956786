"""Experiments on the library and the UD treebanks (run from the checkout: ``python -m
experiments.NAME``); not part of the installed package."""
