"""Tests of conformance/support/: the suite's helpers, one folder per role as there."""
