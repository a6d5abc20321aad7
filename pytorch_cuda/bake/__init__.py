"""docker buildx bake's ways in this project: the `--set PATTERN.KEY=VALUE` overrides `build`, `push` and `bake`
take (set_overrides), how they apply to a bake file's targets (bake_set), and the bake file of the matrix
(bake_file) that `build.py bake` prints."""
