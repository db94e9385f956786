"""Benchmarks of the library (run from the checkout: ``python -m benchmarks.NAME``); not
part of the installed package."""
