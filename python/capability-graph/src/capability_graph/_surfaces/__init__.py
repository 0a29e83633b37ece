"""The surfaces over the core: the SDK's blocking twin (``sdk/``), the Tool Adapter (``tools``),
the MCP server (``mcp``) and the CLI (``cli/``). No surface imports another, except the CLI
starting the MCP server.
"""
