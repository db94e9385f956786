"""neuralparse.search"""
