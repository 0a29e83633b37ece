"""The maintenance commands over the core: ``doctor``/``diagnose``,
``mcp-install``/``mcp-uninstall`` and the client-file editors, ``explain`` and the report they
share.
"""
