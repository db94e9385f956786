"""The Hydra configuration of ``train.py`` and ``predict.py``, shipped inside the package.

``config.yaml`` (training) and ``predict.yaml`` (prediction) with the groups ``data/``,
``model/``, ``system/``, ``trainer/`` and ``search/``; the schemas are in
:mod:`neuralparse.config`.  Being package data, the configuration is found by an installed
wheel as well as from a checkout (``config_path="pkg://neuralparse.conf"``).
"""
