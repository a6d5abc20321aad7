"""Tests of conformance/support/processes/."""
