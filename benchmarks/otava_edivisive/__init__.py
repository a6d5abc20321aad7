"""Apache Otava's e-divisive change-point detector (apache-otava 0.8.0: otava/analysis.py and
otava/change_point_divisive/{base,calculator,detector}.py, the last renamed divisive_detector.py), vendored alone
under the Apache License 2.0 (LICENSE, NOTICE): the anchor of benchmarks/decay_detectors.py. Changed from the original: the imports point here, and the
permutation test (compute_change_points_orig, significance_test.py) is left out. Not linted or type-checked as ours.
"""
