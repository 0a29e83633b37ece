"""A generative run: campaigns of generated cases, two implementations, two oracles, shrinking.

For each campaign, case after case (seeded, see :mod:`.strategies`) until ``count`` cases or the
campaign's share of the time budget: the working folder is prepared once and shared by both
implementations; every surface of the campaign answers on both; the differential oracle compares
them and the property oracle judges each. The first case of each new signature is shrunk
(bounded) to a minimal input that keeps it. Nothing here raises for an implementation's fault.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._json import canonical, merge_patch
from ..manifest import Manifest
from ..schemas import SchemaSet
from ..suite import Suite
from ..workspace import CONFIG_NAME, Workspace
from .faults import fault_count
from .model import GenCase, Observation
from .oracle import compare, outcome_class, properties, subject, surfaces_agree
from .probes import budget_monotonic, paging_and_revision
from .shrink import shrink
from .strategies import CAMPAIGNS, generate
from .targets import Target

__all__ = ["CampaignStats", "ExploreOptions", "ExploreResult", "Finding", "explore"]


@dataclass
class ExploreOptions:
    campaigns: tuple[str, ...] = tuple(CAMPAIGNS)
    seed: int = 0
    count: int = 200
    time_budget: float = 600.0  # seconds for the whole run
    timeout: float = 30.0
    shrink_attempts: int = 120
    jobs: int = 2  # CLI processes at a time
    only: tuple[int, ...] = ()  # replay: only these case indexes
    surfaces: tuple[str, ...] = ()  # only these surfaces (default: each campaign's)
    sample_every: int | None = None  # the interval of the sampled surfaces (default: campaign's)


@dataclass
class Finding:
    kind: str  # "difference" or "property"
    signature: str
    campaign: str
    surface: str
    implementation: str  # the implementation at fault (property) or under test (difference)
    case: GenCase
    minimal: GenCase
    outcomes: dict[str, Observation]  # by implementation name, for the minimal case
    occurrences: int = 1
    shrink_attempts: int = 0
    vector: str = ""  # the file written, or why none


@dataclass
class CampaignStats:
    campaign: str
    cases: int = 0
    seconds: float = 0.0
    #: per surface: answers compared and the number that differed
    compared: dict[str, int] = field(default_factory=dict)
    differing: dict[str, int] = field(default_factory=dict)
    differing_cases: int = 0
    errored: int = 0


@dataclass
class ExploreResult:
    seed: int
    implementation: str
    against: str
    campaigns: list[CampaignStats]
    findings: list[Finding]
    variations: dict[str, int]
    duration_s: float
    options: ExploreOptions


class _Folders:
    """Working folders shared by both implementations, one per distinct configuration."""

    def __init__(self, suite: Suite, root: Path) -> None:
        self.suite = suite
        self.workspace = Workspace(suite, root)
        self._made: dict[str, Path] = {}
        self.used: set[Path] = set()

    def config_path(self, case: GenCase) -> Path:
        key = case.folder_key()
        if key in self._made:
            self.used.add(self._made[key])
            return self._made[key]
        config: Any = None
        if case.config is not None:
            base: Any = {}
            fixture_config = self.suite.fixture_dir(case.fixture) / CONFIG_NAME
            if fixture_config.exists():
                base = json.loads(fixture_config.read_text(encoding="utf-8"))
            config = merge_patch(base, case.config)
        workdir = self.workspace.make(case.fixture, config, private=True)
        for name, text in case.files.items():
            (workdir.path / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        if case.config_text is not None:
            workdir.config_path.write_bytes(case.config_text.encode("utf-8", "surrogatepass"))
        self._made[key] = workdir.config_path
        return workdir.config_path


class _Explorer:
    def __init__(
        self,
        suite: Suite,
        schemas: SchemaSet,
        subject: Manifest,
        against: Manifest,
        options: ExploreOptions,
        root: Path,
    ) -> None:
        self.suite, self.schemas, self.options = suite, schemas, options
        requests = {op["tool"]: op["request"] for op in suite.operations.get("operations", ())}
        self.count_faults = lambda case, code: fault_count(case, code, schemas, requests)
        self.subject = Target(subject, schemas, options.timeout)
        self.against = Target(against, schemas, options.timeout)
        self.folders = _Folders(suite, root)
        self.findings: dict[str, Finding] = {}
        self.variations: dict[str, int] = {}
        self.cli_tools = suite.cli_tools
        self.cli_slots = asyncio.Semaphore(max(1, options.jobs))
        self.stats: list[CampaignStats] = []
        self.deadline = float("inf")  # the running campaign's
        #: per implementation, the budget campaign's SDK answers: (budget, request, limit, class)
        self.budget_samples: dict[str, list[tuple[str, str, Any, str]]] = {}
        #: graphs the multi-request properties ran on
        self.probed: set[Path] = set()

    async def run(self) -> None:
        started = time.monotonic()
        deadline = started + self.options.time_budget
        campaigns = list(self.options.campaigns)
        for position, campaign in enumerate(campaigns):
            now = time.monotonic()
            share = (deadline - now) / (len(campaigns) - position)
            await self._campaign(campaign, now + max(share, 0.0))
        await asyncio.gather(self.subject.close(), self.against.close())

    async def _campaign(self, campaign: str, deadline: float) -> None:
        self.deadline = deadline
        stats = CampaignStats(campaign)
        self.stats.append(stats)
        began = time.monotonic()
        wanted = self.options.surfaces
        surfaces = tuple(s for s in CAMPAIGNS[campaign][1] if not wanted or s in wanted)
        every = CAMPAIGNS[campaign][2]
        if self.options.sample_every is not None:
            every = {surface: self.options.sample_every for surface in every}
        indexes = self.options.only or tuple(range(self.options.count))
        batch = self.options.jobs if surfaces == ("cli",) else 1
        position = 0
        while position < len(indexes) and time.monotonic() < deadline:
            chunk = indexes[position : position + batch]
            position += len(chunk)
            cases = [generate(campaign, self.options.seed, i) for i in chunk]
            await asyncio.gather(
                *(
                    self._case(
                        case, tuple(s for s in surfaces if case.index % every.get(s, 1) == 0), stats
                    )
                    for case in cases
                )
            )
        await self._campaign_properties(campaign)
        stats.seconds = time.monotonic() - began

    async def _campaign_properties(self, campaign: str) -> None:
        """The properties over several requests: paging and revision on the graphs the campaign
        used (a few), budget monotonicity over the budget campaign."""
        for target in (self.subject, self.against):
            for problem in budget_monotonic(self.budget_samples.pop(target.name, [])):
                case = GenCase(campaign, "catalog", {"call": {"tool": "-", "arguments": {}}})
                self._record(
                    "property", f"{target.name} {campaign}: {problem}", case, "sdk", target.name, {}
                )
        if campaign not in ("call", "lexical"):
            return
        for config in sorted(self.folders.used - self.probed)[:6]:
            self.probed.add(config)
            for target in (self.subject, self.against):
                for problem in await paging_and_revision(target, config):
                    case = GenCase(
                        campaign,
                        config.parent.name,
                        {"call": {"tool": "list_capabilities", "arguments": {}}},
                    )
                    self._record(
                        "property",
                        f"{target.name} {campaign}: {problem}",
                        case,
                        "sdk",
                        target.name,
                        {},
                    )

    async def _answers(self, case: GenCase, surface: str) -> tuple[Observation, Observation]:
        config = self.folders.config_path(case)
        if surface == "cli":
            async with self.cli_slots:
                return await asyncio.gather(
                    self.subject.observe(case, surface, config),
                    self.against.observe(case, surface, config),
                )
        return await asyncio.gather(
            self.subject.observe(case, surface, config), self.against.observe(case, surface, config)
        )

    async def _case(self, case: GenCase, surfaces: tuple[str, ...], stats: CampaignStats) -> None:
        stats.cases += 1
        differed = False
        mine: dict[str, Observation] = {}
        theirs: dict[str, Observation] = {}
        for surface in surfaces:
            ours, other = await self._answers(case, surface)
            mine[surface], theirs[surface] = ours, other
            if case.campaign == "budget" and surface == "sdk":
                self._budget_sample(case, ours, other)
            stats.compared[surface] = stats.compared.get(surface, 0) + 1
            if ours.errored or other.errored:
                stats.errored += 1
            signature, applied = compare(case, ours, other, self.count_faults)
            for variation in applied:
                self.variations[variation] = self.variations.get(variation, 0) + 1
            if signature is not None:
                differed = True
                stats.differing[surface] = stats.differing.get(surface, 0) + 1
                await self._difference(case, surface, signature, ours, other)
            for target, observation in ((self.subject, ours), (self.against, other)):
                for problem in properties(case, observation, self.schemas, self.cli_tools):
                    await self._property(case, surface, target, problem, observation)
        for target, answers in ((self.subject, mine), (self.against, theirs)):
            for problem in surfaces_agree(case, answers):
                outcomes = {f"{target.name} {s}": o for s, o in answers.items()}
                self._record(
                    "property",
                    f"{target.name} {case.campaign}: {problem}",
                    case,
                    "all",
                    target.name,
                    outcomes,
                )
        if differed:
            stats.differing_cases += 1

    def _budget_sample(self, case: GenCase, *answers: Observation) -> None:
        request = canonical(case.action["call"])
        for target, answer in zip((self.subject, self.against), answers, strict=True):
            sample = (
                case.meta["budget"],
                request,
                case.meta["limit"],
                outcome_class("sdk", answer.value),
            )
            self.budget_samples.setdefault(target.name, []).append(sample)

    def _record(
        self,
        kind: str,
        signature: str,
        case: GenCase,
        surface: str,
        who: str,
        outcomes: dict[str, Observation],
    ) -> Finding | None:
        found = self.findings.get(signature)
        if found is not None:
            found.occurrences += 1
            return None
        finding = Finding(kind, signature, case.campaign, surface, who, case, case, outcomes)
        self.findings[signature] = finding
        return finding

    async def _difference(
        self, case: GenCase, surface: str, signature: str, ours: Observation, other: Observation
    ) -> None:
        finding = self._record(
            "difference",
            signature,
            case,
            surface,
            self.subject.name,
            {self.subject.name: ours, self.against.name: other},
        )
        if finding is None:
            return

        async def keeps(candidate: GenCase) -> bool:
            a, b = await self._answers(candidate, surface)
            if compare(candidate, a, b, self.count_faults)[0] != signature:
                return False
            finding.outcomes = {self.subject.name: a, self.against.name: b}
            return True

        finding.minimal, finding.shrink_attempts = await shrink(
            case, keeps, self._attempts(surface), self.deadline
        )

    async def _property(
        self, case: GenCase, surface: str, target: Target, problem: str, observation: Observation
    ) -> None:
        signature = f"{target.name} {case.campaign}/{surface} {subject(case)}: {problem}"
        finding = self._record(
            "property", signature, case, surface, target.name, {target.name: observation}
        )
        if finding is None or problem.startswith("errored"):
            return

        async def keeps(candidate: GenCase) -> bool:
            answer = await target.observe(candidate, surface, self.folders.config_path(candidate))
            if problem not in properties(candidate, answer, self.schemas, self.cli_tools):
                return False
            finding.outcomes = {target.name: answer}
            return True

        finding.minimal, finding.shrink_attempts = await shrink(
            case, keeps, self._attempts(surface), self.deadline
        )

    def _attempts(self, surface: str) -> int:
        # a CLI attempt costs two process starts; the others a round trip to a warm process
        attempts = self.options.shrink_attempts
        return attempts // 4 if surface == "cli" else attempts


def explore(
    suite: Suite, schemas: SchemaSet, subject: Manifest, against: Manifest, options: ExploreOptions
) -> ExploreResult:
    """Run the campaigns of ``options``: ``subject`` under test, compared with ``against``."""
    root = Path(tempfile.mkdtemp(prefix="cg-explore-"))
    clock = time.monotonic()
    explorer = _Explorer(suite, schemas, subject, against, options, root)
    try:
        asyncio.run(explorer.run())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ordered = sorted(explorer.findings.values(), key=lambda f: (f.kind, f.campaign, f.signature))
    return ExploreResult(
        seed=options.seed,
        implementation=subject.name,
        against=against.name,
        campaigns=explorer.stats,
        findings=ordered,
        variations=dict(sorted(explorer.variations.items())),
        duration_s=time.monotonic() - clock,
        options=options,
    )
