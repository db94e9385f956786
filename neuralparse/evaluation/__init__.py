"""neuralparse.evaluation"""
