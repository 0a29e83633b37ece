"""The core: the engine every surface drives -- the snapshot, the operations, documents,
executors and the match pipeline. It imports only itself and ``_generated/``.
"""
