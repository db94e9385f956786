"""Plain-Python reference implementations that only the tests use (production code keeps its
references inside the system packages, e.g. :mod:`neuralparse.systems.planar.reference`)."""
