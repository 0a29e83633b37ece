"""``python -m capability_graph.cli``: the console script, run as a module (how the hosts that
``mcp-install`` configured start the MCP server)."""

from . import main

main()
