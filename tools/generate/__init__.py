"""The steps of the codegen pipeline (``tools/codegen.py``): each module renders the files one
step generates from ``spec/``; ``codegen.py`` runs them in dependency order, writes or checks."""
