"""Tests of conformance/support/probes/."""
