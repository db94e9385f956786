"""What training and prediction share at run time: devices, batching, checkpoints, torchrun.

Data flows one way through the library (file -> sentences -> tensors -> states -> actions ->
trees -> file); these modules sit beside that flow and are used by both ends of it.  Neither
:mod:`neuralparse.training` nor :mod:`neuralparse.prediction` imports the other: whatever they
both need lives here.
"""
