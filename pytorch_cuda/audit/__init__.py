"""`build.py audit`, the security lane: every lock against the Python advisory databases (pip-audit) and the base's
recorded Debian packages against the `-security` suite; findings as JSON, Markdown and CycloneDX VEX.

lock_pins (which locks, what they pin), python_audit (pip-audit, and PyPI's project JSON where it cannot answer),
findings (what was found, what to do: a pull request where a fix exists, an issue where none does), audit_markdown
(the Markdown a pull request or an issue carries), audit_files (the VEX, the VEX in an SBOM, the Markdown files),
fixing (`--fix`),
audit_flow (the whole flow, from an AuditRequest: the command line only parses and prints)."""
