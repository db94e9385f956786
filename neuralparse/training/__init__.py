"""Static-oracle training: oracle examples, batching, the training loop and checkpoints."""
