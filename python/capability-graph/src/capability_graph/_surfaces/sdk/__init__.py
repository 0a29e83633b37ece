"""The SDK surface's blocking side: the runner (``blocking``) and the twin generated from the
async class (``blocking_graph``). The async SDK is the core's graph, exported by the package.
"""
