"""What training and prediction share at run time: devices and threads, batching, checkpoints,
torchrun, how entry points end on errors and signals (:mod:`~neuralparse.runtime.cli`) and
how long prediction runs keep native memory bounded (:mod:`~neuralparse.runtime.memory`).

Data flows one way through the library (file -> sentences -> tensors -> states -> actions ->
trees -> file); these modules sit beside that flow and are used by both ends of it.  Neither
:mod:`neuralparse.training` nor :mod:`neuralparse.prediction` imports the other: whatever they
both need lives here.
"""
