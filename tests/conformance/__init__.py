"""Project tests for the conformance suite: helpers, and proof that it catches broken environments."""
