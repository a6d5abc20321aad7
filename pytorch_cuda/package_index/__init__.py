"""The package index client that bump, audit and the locks read through (floor 1: a boundary to the outside).

- simple_index: a project's files on a PEP 503 (HTML) or PEP 691 (JSON) simple index, and the one HTTP GET
  (with the CA bundle) that bump's Debian archive, audit's advisory databases and PyPI's JSON API read through.
- remote_wheel: a wheel's METADATA over HTTP range requests, where the index serves no PEP 658 file.
- release_age: the release-age gate (policy `min_release_age`) on those files, for bump's moves and the locks'
  transitive pins (uv's --exclude-newer).
"""
