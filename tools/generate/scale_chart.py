"""The scale benchmark's figures, drawn from ``docs/benchmarks/bench_scale.json`` (written by
``python/capability-graph/bench/bench_scale.py --json``) for the ``docs`` step:

- ``scale_svg``: ``docs/benchmarks/scale.svg``, two charts side by side, written by hand (no
  plotting library): the time of each operation against the number of capabilities (log-log,
  one colour per operation, solid for Python and dashed for TypeScript, with a dotted slope-1
  guide: a line steeper than it grows faster than linearly), and the memory per capability
  (peak RSS after open minus a bare process, over the capabilities), with the file's bytes per
  capability for reference;
- ``scale_section``: the lines of the ``bench_scale`` part of the figures in
  ``docs/benchmarks.md``: the picture, a short table (operation x size, Python / TypeScript, and
  the growth exponents between consecutive sizes) and the operations flagged superlinear.

The output depends only on the JSON, so ``codegen --check`` can compare it like any other file.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

SOURCE = "docs/benchmarks/bench_scale.json"

#: The timed operations in the order of the legend: key, label, factor to milliseconds, colour.
OPERATIONS: tuple[tuple[str, str, float, str], ...] = (
    ("open_s", "open", 1000.0, "#4e79a7"),
    ("reload_s", "reload", 1000.0, "#9c755f"),
    ("list_s", "list everything", 1000.0, "#59a14f"),
    ("match_ms", "match, cold", 1.0, "#e15759"),
    ("match_warm_ms", "match, warm", 1.0, "#f28e2b"),
    ("resolve_ms", "resolve depth 3", 1.0, "#b07aa1"),
    ("describe_one_ms", "describe one", 1.0, "#76b7b2"),
    ("describe_ms", "describe", 1.0, "#7f7f7f"),
)
IMPLEMENTATIONS = (("python", "Python", ""), ("typescript", "TypeScript", "7 4"))

WIDTH, HEIGHT = 980, 470
FONT = "font-family='Helvetica, Arial, sans-serif'"


def _num(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _size_label(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1000 and size % 1000 == 0:
        return f"{size // 1000}k"
    return str(size)


def _ms_label(ms: float) -> str:
    if ms >= 1000:
        return f"{ms / 1000:g} s"
    if ms >= 1:
        return f"{ms:g} ms"
    return f"{ms * 1000:g} µs"


class _Axes:
    """A plot area: x on a log scale of capabilities, y on a log or linear scale."""

    def __init__(
        self,
        box: tuple[float, float, float, float],
        sizes: Sequence[int],
        y_range: tuple[float, float],
        *,
        log_y: bool,
    ) -> None:
        self.left, self.top, self.width, self.height = box
        low, high = math.log10(min(sizes)), math.log10(max(sizes))
        pad = max(0.15, (high - low) * 0.08)
        self.x_low, self.x_high = low - pad, high + pad
        self.log_y = log_y
        self.y_low, self.y_high = (math.log10(v) for v in y_range) if log_y else y_range

    def x(self, size: float) -> float:
        share = (math.log10(size) - self.x_low) / (self.x_high - self.x_low)
        return self.left + share * self.width

    def y(self, value: float) -> float:
        position = math.log10(value) if self.log_y else value
        share = (position - self.y_low) / (self.y_high - self.y_low)
        return self.top + self.height - share * self.height

    def frame(
        self,
        sizes: Sequence[int],
        y_ticks: Iterable[tuple[float, str]],
        title: str,
        y_title: str,
    ) -> list[str]:
        bottom, right = self.top + self.height, self.left + self.width
        out = [
            f"<text x='{_num(self.left)}' y='{_num(self.top - 14)}' font-size='15' "
            f"font-weight='bold'>{title}</text>",
            f"<rect x='{_num(self.left)}' y='{_num(self.top)}' width='{_num(self.width)}' "
            f"height='{_num(self.height)}' fill='none' stroke='#999'/>",
        ]
        for value, label in y_ticks:
            y = _num(self.y(value))
            out += [
                f"<line x1='{_num(self.left)}' y1='{y}' x2='{_num(right)}' y2='{y}' "
                "stroke='#e6e6e6'/>",
                f"<text x='{_num(self.left - 6)}' y='{y}' font-size='11' text-anchor='end' "
                f"dominant-baseline='middle'>{label}</text>",
            ]
        for size in sizes:
            x = _num(self.x(size))
            out += [
                f"<line x1='{x}' y1='{_num(self.top)}' x2='{x}' y2='{_num(bottom)}' "
                "stroke='#e6e6e6'/>",
                f"<text x='{x}' y='{_num(bottom + 16)}' font-size='12' "
                f"text-anchor='middle'>{_size_label(size)}</text>",
            ]
        out += [
            f"<text x='{_num(self.left + self.width / 2)}' y='{_num(bottom + 36)}' "
            "font-size='12' text-anchor='middle'>capabilities (log scale)</text>",
            f"<text transform='translate({_num(self.left - 58)},"
            f"{_num(self.top + self.height / 2)}) rotate(-90)' font-size='12' "
            f"text-anchor='middle'>{y_title}</text>",
        ]
        return out

    def line(
        self, points: Sequence[tuple[float, float]], colour: str, dash: str, marker: bool = True
    ) -> list[str]:
        coordinates = " ".join(f"{_num(self.x(x))},{_num(self.y(y))}" for x, y in points)
        dashing = f" stroke-dasharray='{dash}'" if dash else ""
        out = [
            f"<polyline points='{coordinates}' fill='none' stroke='{colour}' "
            f"stroke-width='2'{dashing}/>"
        ]
        if marker:
            fill = colour if not dash else "white"
            out += [
                f"<circle cx='{_num(self.x(x))}' cy='{_num(self.y(y))}' r='3' fill='{fill}' "
                f"stroke='{colour}' stroke-width='1.5'/>"
                for x, y in points
            ]
        return out


#: The outcome member of each match time: a match that ended in an error (CG_MODEL_TIMEOUT)
#: took its deadline, not the work; it is left out of the lines.
OUTCOME_OF = {"match_ms": "match_outcome", "match_warm_ms": "match_warm_outcome"}


def _failed(row: dict[str, Any], key: str) -> str | None:
    outcome = str(row.get(OUTCOME_OF.get(key, ""), ""))
    return outcome if outcome.startswith("CG_") else None


def _series(rows: Sequence[dict[str, Any]], implementation: str, key: str, factor: float) -> list:
    mine = sorted(
        (
            r
            for r in rows
            if r["implementation"] == implementation and r.get(key, 0) > 0 and not _failed(r, key)
        ),
        key=lambda r: r["capabilities"],
    )
    return [(r["capabilities"], r[key] * factor) for r in mine]


def scale_svg(data: dict[str, Any]) -> str:
    rows = data["rows"]
    sizes = sorted({r["capabilities"] for r in rows})
    times = [
        value for key, _, factor, _ in OPERATIONS for r in rows if (value := r[key] * factor) > 0
    ]
    low = 10 ** math.floor(math.log10(min(times)))
    high = 10 ** math.ceil(math.log10(max(times)))
    out = [
        "<svg xmlns='http://www.w3.org/2000/svg' "
        f"width='{WIDTH}' height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}' {FONT}>",
        f"<!-- {_generated_by()} -->",
        f"<rect width='{WIDTH}' height='{HEIGHT}' fill='white'/>",
    ]
    time_axes = _Axes((80, 40, 520, 300), sizes, (low, high), log_y=True)
    decades = [10.0**e for e in range(round(math.log10(low)), round(math.log10(high)) + 1)]
    out += time_axes.frame(
        sizes,
        [(d, _ms_label(d)) for d in decades],
        "Time per operation",
        "time (log scale)",
    )
    # A slope-1 guide (linear growth) through the lower left corner, for the eye.
    first, last = sizes[0], sizes[-1]
    if last > first:
        start = low * 10
        end = min(high, start * last / first)
        guide_last = first * end / start
        out.append(
            f"<line x1='{_num(time_axes.x(first))}' y1='{_num(time_axes.y(start))}' "
            f"x2='{_num(time_axes.x(guide_last))}' y2='{_num(time_axes.y(end))}' "
            "stroke='#bbb' stroke-width='1.5' stroke-dasharray='2 3'/>"
        )
        out.append(
            f"<text x='{_num(time_axes.x(guide_last) - 6)}' y='{_num(time_axes.y(end) + 14)}' "
            "font-size='10' fill='#888' text-anchor='end'>linear growth</text>"
        )
    for implementation, _, dash in IMPLEMENTATIONS:
        for key, _, factor, colour in OPERATIONS:
            points = _series(rows, implementation, key, factor)
            if points:
                out += time_axes.line(points, colour, dash)

    per_cap = [
        r[key] for r in rows for key in ("mem_bytes_per_cap", "file_bytes_per_cap") if r[key] > 0
    ]
    step = _nice_step(max(per_cap) / 5)
    top = step * math.ceil(max(per_cap) * 1.05 / step)
    memory_axes = _Axes((720, 40, 240, 300), sizes, (0, top), log_y=False)
    ticks = [
        (v, f"{v / 1000:g} KB" if top >= 2000 else f"{v:g} B")
        for v in (step * i for i in range(int(top / step) + 1))
    ]
    out += memory_axes.frame(sizes, ticks, "Memory per capability", "bytes per capability")
    for implementation, _, dash in IMPLEMENTATIONS:
        points = _series(rows, implementation, "mem_bytes_per_cap", 1.0)
        if points:
            out += memory_axes.line(points, "#4e79a7", dash)
    file_points = _series(rows, rows[0]["implementation"], "file_bytes_per_cap", 1.0)
    out += memory_axes.line(file_points, "#999", "2 3", marker=False)

    # The legends, under the charts: operations by colour, implementations by line style.
    legend_top = 400
    for index, (_, label, _, colour) in enumerate(OPERATIONS):
        x = 80 + (index % 4) * 135
        y = legend_top + (index // 4) * 20
        out += [
            f"<line x1='{x}' y1='{y}' x2='{x + 22}' y2='{y}' stroke='{colour}' stroke-width='3'/>",
            f"<text x='{x + 28}' y='{y}' font-size='12' dominant-baseline='middle'>{label}</text>",
        ]
    styles = [
        ("", "Python", "#555"),
        ("7 4", "TypeScript", "#555"),
    ]
    for index, (dash, label, colour) in enumerate(styles):
        y = legend_top + index * 20
        dashing = f" stroke-dasharray='{dash}'" if dash else ""
        out += [
            f"<line x1='620' y1='{y}' x2='660' y2='{y}' stroke='{colour}' stroke-width='2'"
            f"{dashing}/>",
            f"<text x='666' y='{y}' font-size='12' dominant-baseline='middle'>{label}</text>",
        ]
    out += [
        f"<line x1='780' y1='{legend_top}' x2='820' y2='{legend_top}' stroke='#999' "
        "stroke-width='2' stroke-dasharray='2 3'/>",
        f"<text x='826' y='{legend_top}' font-size='12' dominant-baseline='middle'>"
        "file bytes</text>",
        f"<text x='780' y='{legend_top + 20}' font-size='11' dominant-baseline='middle' "
        "fill='#555'>(peak RSS after open −</text>",
        f"<text x='780' y='{legend_top + 36}' font-size='11' dominant-baseline='middle' "
        "fill='#555'>bare process) / capabilities</text>",
    ]
    if data.get("recorded"):
        out.append(
            f"<text x='{WIDTH - 10}' y='{HEIGHT - 8}' font-size='10' fill='#888' "
            f"text-anchor='end'>{_escape(str(data['recorded']))}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _generated_by() -> str:
    # An XML comment cannot hold "--": the do-not-edit line of the other files, with a colon.
    return f"Generated by tools/codegen.py from {SOURCE}: DO NOT EDIT."


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _nice_step(raw: float) -> float:
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


# -- the table -------------------------------------------------------------------------------------


def _time_cell(ms: float) -> str:
    if ms >= 1000:
        return f"{ms / 1000:.3g} s"
    if ms >= 1:
        return f"{ms:.3g} ms"
    return f"{ms * 1000:.3g} µs"


def _op_cell(row: dict[str, Any], key: str, factor: float) -> str:
    failed = _failed(row, key)
    return _time_cell(row[key] * factor) + (f" ({failed})" if failed else "")


def scale_section(data: dict[str, Any], image: str) -> list[str]:
    """The figures of ``bench_scale``: the picture, the table and the flagged operations."""
    rows = data["rows"]
    sizes = sorted({r["capabilities"] for r in rows})
    by = {(r["implementation"], r["capabilities"]): r for r in rows}
    exponents = {(e["implementation"], e["key"], e["to"]): e for e in data.get("exponents", [])}
    names = [name for name, _, _ in IMPLEMENTATIONS if any(key[0] == name for key in by)]
    lines = [
        "### `bench_scale`",
        "",
        f"![Time per operation and memory per capability against the number of capabilities, "
        f"Python solid, TypeScript dashed]({image})",
        "",
    ]
    if data.get("recorded"):
        lines += [str(data["recorded"]), ""]
    which = " / ".join(label for name, label, _ in IMPLEMENTATIONS if name in names)
    head = ["operation", *(f"{size:,}" for size in sizes)]
    head += [f"growth {_size_label(a)}→{_size_label(b)}" for a, b in itertools.pairwise(sizes)]
    lines += [
        f"Each cell: {which}. Growth: the exponent log(t2/t1)/log(n2/n1); "
        "**bold** above 1.15 (faster than linear).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]

    def cells(render: Any, key: str | None = None) -> list[str]:
        out = []
        for size in sizes:
            values = [render(by[(n, size)]) if (n, size) in by else "–" for n in names]
            out.append(" / ".join(values))
        if key is not None:
            for size in sizes[1:]:
                found = [exponents.get((n, key, size)) for n in names]
                out.append(
                    " / ".join(
                        "–"
                        if e is None or e["exponent"] is None
                        else f"**{e['exponent']:.2f}**"
                        if e["superlinear"]
                        else f"{e['exponent']:.2f}"
                        for e in found
                    )
                )
        else:
            out += [""] * (len(sizes) - 1)
        return out

    for key, label, factor, _ in OPERATIONS:
        lines.append(
            f"| {label} | "
            + " | ".join(cells(lambda r, k=key, f=factor: _op_cell(r, k, f), key))
            + " |"
        )
    extra: list[tuple[str, Any, str | None]] = [
        ("peak RSS after open", lambda r: f"{r['peak_rss_mb']:,.0f} MB", "peak_rss_mb"),
        ("memory per capability", lambda r: f"{r['mem_bytes_per_cap']:,} B", None),
        ("file bytes per capability", lambda r: f"{r['file_bytes_per_cap']:,.0f} B", None),
        ("ticker max gap (goal ≤ 50 ms)", lambda r: f"{r['ticker_max_gap_ms']:g} ms", None),
        (
            f"cold match outcome (deadline {rows[0]['match_timeout_ms']:,} ms)",
            lambda r: f"{r['match_outcome']}" + ("" if r["match_within_deadline"] else " (late)"),
            None,
        ),
    ]
    for label, render, key in extra:
        lines.append(f"| {label} | " + " | ".join(cells(render, key)) + " |")
    flagged = [e for e in data.get("exponents", []) if e["superlinear"]]
    lines.append("")
    if flagged:
        lines.append(
            "Superlinear: "
            + "; ".join(
                f"{e['implementation']} {e['operation']} {_size_label(e['from'])}→"
                f"{_size_label(e['to'])} ({e['exponent']:.2f})"
                for e in flagged
            )
            + "."
        )
    else:
        lines.append("No operation grows faster than linearly (every exponent ≤ 1.15).")
    capped = sorted({e["capped"] for e in data.get("exponents", []) if e.get("capped")})
    if capped:
        lines += [
            "",
            f"A match that ended in {', '.join(capped)} took its deadline, not the work: it "
            "has no growth exponent and is left out of the chart's lines.",
        ]
    lines.append("")
    return lines
