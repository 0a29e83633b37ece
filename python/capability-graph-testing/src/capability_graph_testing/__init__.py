"""Test support of the Capability Graph workspace, shared by the test suites and the tools.

``common`` builds graph inputs and reads the spec; ``battery`` and ``client_files`` hold the
reliability battery's generators, checks and engines (the fast tests and ``scripts/stress.py``);
``reliability`` the blocking-twin storm and the event-loop ticker (also ``bench/``);
``surfaces`` the CLI and MCP drivers; ``documents`` and ``matching`` the document-root and match
pipeline helpers; ``chat_server`` and ``fake_codex`` the loopback model server and the fake
``codex`` program; ``flowcast_support`` the flowcast tests' process and git helpers;
``processes`` whether a pid is alive, and waiting for pids to go; ``threads`` a call in a
daemon thread, bounded in time.
"""
