"""neuralparse.io"""
