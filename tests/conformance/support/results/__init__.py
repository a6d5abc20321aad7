"""Tests of conformance/support/results/."""
