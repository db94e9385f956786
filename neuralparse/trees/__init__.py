"""neuralparse.trees"""
