"""The ``capability-graph`` command line, as a library and as a module.

``run(argv, stdin, stdout, stderr)`` runs one command line and returns its exit status;
``main()`` is the console script. ``python -m capability_graph.cli`` runs it too: that is the
command ``mcp-install`` writes into an MCP client's configuration (CG-MAINT-1), so this module's
name is part of the contract with files already on users' machines. The commands themselves live
in the CLI surface (``_surfaces/cli/``).
"""

from __future__ import annotations

from ._surfaces.cli.main import main, run

__all__ = ["main", "run"]

if __name__ == "__main__":
    main()
