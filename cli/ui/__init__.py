"""`dshc ui`: a local web explorer of the tool surface (matrix, explain, diff, graph, live reload).

Declarations in, a Starlette app out; the page and its assets ship in `static/` (no network at run time).
"""
