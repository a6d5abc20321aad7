"""The hash-locked requirements of every image variant, in one place.

- file_format: the lock's text: read it, format it, slice it into the image's install layers.
- writing: where each lock lives, how uv is run, how a lock is written and what changed.
- resolving: `build.py lock`: resolve each variant's requirements, check a committed lock, refuse a build without one.
- forward_only: a re-resolution that keeps what its inputs do not move (or, for lock maintenance, upgrades every
  pin) and never moves a transitive pin below the committed lock.
- child_flavour: the lock of a child flavour's extras, resolved against its parent's lock.
- debian_record: images/debian-<base>.lock, the images' Debian packages (written by `bump --record-debian`).
"""
