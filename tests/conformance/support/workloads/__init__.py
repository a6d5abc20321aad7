"""Tests of conformance/support/workloads/."""
