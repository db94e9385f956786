"""neuralparse.training"""
