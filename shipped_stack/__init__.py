"""The stack the image ships, carried to a bare GPU host: `python -m shipped_stack` (see __main__).

Here (the build machine): `host_lock` resolves the image's locked versions for the GPU hosts' Python with hashes,
`pack` installs that lock with --require-hashes into a folder and packs it (tar, zstd with a long window) into parts
of a size one device call carries, each with its sha256, and `plan` prints the calls. There (the GPU host, standard
library plus the carried `zstandard` wheel): `receive` keeps each part outside the checkout, checks its hash and,
once every part is there, unpacks them into a venv that cannot see the host's packages, writes the contract's
carried-stack marker into it, and prints the versions it installed.
"""
