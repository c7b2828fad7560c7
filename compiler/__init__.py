"""dshc compiler: declarations + catalog → frozen per-request tool views."""
