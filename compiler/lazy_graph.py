"""A networkx graph kept as its nodes and edges until first used.

A Program carries its declarations graph for `dshc graph`, the explorer and cycle reports; deciding
and compiling never look at it, so neither pays networkx's import (~0.3 s) unless something does.
"""

from __future__ import annotations


class LazyGraph:
    """Nodes as (node, attributes) pairs, edges as (u, v, key, attributes); materialised on first use."""

    def __init__(self, kind: str, nodes: list | None, edges: list | None, read=None) -> None:
        """`read`, when given: a function returning (nodes, edges), called on first need instead (a cache's
        decoder: the edges' attributes refer to objects a process deciding one call never reads)."""
        self._kind, self._nodes, self._edges, self._graph, self._read = kind, nodes, edges, None, read

    def _unpack(self) -> None:
        if self._read is not None:
            self._nodes, self._edges = self._read()
            self._read = None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.materialise(), name)

    def __len__(self) -> int:
        return len(self.materialise())

    def __iter__(self):
        return iter(self.materialise())

    def __contains__(self, node) -> bool:
        return node in self.materialise()

    def __getitem__(self, node):
        return self.materialise()[node]

    def materialise(self):
        if self._graph is None:
            import networkx as nx

            if self._kind not in ("Graph", "DiGraph", "MultiGraph", "MultiDiGraph"):
                raise ValueError(f"`{self._kind}` is not a networkx graph kind")
            graph = getattr(nx, self._kind)()
            self._unpack()
            graph.add_nodes_from(self._nodes)
            graph.add_edges_from((u, v, k, a) for u, v, k, a in self._edges)
            self._graph = graph
        return self._graph

    def parts(self) -> tuple[str, list, list]:
        """(kind, nodes, edges) as given, without materialising: what a cache stores."""
        if self._graph is not None:
            graph = self._graph
            return self._kind, list(graph.nodes(data=True)), list(graph.edges(keys=True, data=True))
        self._unpack()
        return self._kind, self._nodes, self._edges  # type: ignore[return-value]  # unpacked: lists
