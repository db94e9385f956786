"""neuralparse.model"""
