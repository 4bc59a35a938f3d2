"""The exact neighbour search (``search``) and the store that shares its graphs
between the cells of a run (``graphs``)."""
