"""What this process, device and driver stack are and have: read or probed in a subprocess, not loaded."""
