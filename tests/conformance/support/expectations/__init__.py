"""Tests of conformance/support/expectations/."""
