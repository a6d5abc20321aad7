"""The build matrix: matrix.yaml (and fleet.yaml) as typed, validated data, and what follows from it alone: the
variants and flavours, their tags and labels, the build manifest, the pinned base.

Nothing here touches the engine or the network; ``build`` and ``render`` read it."""
