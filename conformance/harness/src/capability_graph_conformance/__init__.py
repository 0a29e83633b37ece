"""cg-conformance: the conformance suite of Capability Graph and its language-neutral harness.

The harness runs golden vectors against an implementation described by a manifest: the SDK and
the Tool Adapter through the implementation's *driver* (JSON lines on stdin/stdout), the MCP
server through the official ``mcp`` client over stdio, and the CLI as a subprocess. It never
imports an implementation. The vectors, fixtures and schemas of this version travel inside the
package (``data/``), so one install pins the suite.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DRIVER_PROTOCOL", "SUITE_VERSION", "__version__"]

__version__: Final = "1.4.0"
#: The version of the vectors carried by this package (the suite moves with the harness).
SUITE_VERSION: Final = __version__
#: The driver protocol spoken with implementations (spec/conformance/driver-protocol.schema.json).
DRIVER_PROTOCOL: Final = "1.1"
