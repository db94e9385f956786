"""neuralparse.systems"""
