"""The CLI surface: one module per command family, the argv grammar and the streams
(``main`` runs a command line; ``capability_graph.cli`` is its public name).
"""
