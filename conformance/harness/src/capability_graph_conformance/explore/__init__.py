"""The generative mode (``cg-conformance explore``): the suite generates its own cases from the
schemas, the operation table and the CLI grammar, runs them on two implementations and reports
where they differ (differential oracle) and what any one of them breaks (property oracle),
each find shrunk to a minimal input that can be written out as a static vector."""

from .engine import ExploreOptions, ExploreResult, explore
from .strategies import CAMPAIGNS

__all__ = ["CAMPAIGNS", "ExploreOptions", "ExploreResult", "explore"]
