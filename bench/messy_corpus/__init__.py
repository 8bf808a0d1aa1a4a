"""The messy-file corpus of issue 33 and what it measures.

- ``build.build(folder)`` writes the corpus (``build`` and the case modules) and
  returns the truth of each file;
- ``manifest.yaml`` says what type a person expects each column to have;
- ``measure.measure_corpus(folder, truth)`` imports every file through the real import
  engine and compares (``CorpusFigures``: the share typed as expected, the misses, the
  columns silently left as text).

The test is ``tests/datasets/test_messy_corpus.py``; the figure in BENCHMARKS.md is
``bench/messy_files.py``.
"""
