"""``python -m capability_graph_conformance`` is ``cg-conformance``."""

from .cli import main

main()
