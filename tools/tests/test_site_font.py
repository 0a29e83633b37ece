"""The site's CJK font (tools/site_font.py, the mkdocs hook): it names the install command when
the package is missing or of another version, ships each slice's woff2 file with only the CJK
part of its unicode-range, and the site's stylesheets put the family first.

These run on a small fake package (the tests session installs no npm package); the docs
session builds the real site and tools/check_site.py looks at it in Chromium.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import site_conformance
import site_font

ROOT = Path(__file__).resolve().parents[2]

RULE = """/* noto-sans-sc-[{n}]-{w}-normal */
@font-face {{
  font-family: 'Noto Sans SC';
  font-style: normal;
  font-display: swap;
  font-weight: {w};
  src: url(./files/noto-sans-sc-{n}-{w}-normal.woff2) format('woff2'), url(./files/noto-sans-sc-{n}-{w}-normal.woff) format('woff');
  unicode-range: {ranges};
}}
"""  # noqa: E501 -- the package's own layout, line for line

#: Slice 1 mixes CJK with ASCII; slice 2 is CJK only; "latin" has no CJK at all.
SLICES = {"1": "U+20-7e,U+3002,U+4e00-4e10", "2": "U+9636,U+ff0c", "latin": "U+0-ff,U+2000-206f"}


def fake_project(folder: Path, *, version: str = "5.3.0", pinned: str = "5.3.0") -> Path:
    """tools/site-font with the package installed: package.json, CSS per weight, files, LICENSE."""
    manifest = {"private": True, "dependencies": {site_font.NAME: pinned}}
    (folder / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    package = site_font.package_dir(folder)
    (package / "files").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"version": version}), encoding="utf-8")
    (package / "LICENSE").write_text("SIL Open Font License 1.1", encoding="utf-8")
    for weight in site_font.WEIGHTS:
        rules = [RULE.format(n=n, w=weight, ranges=r) for n, r in SLICES.items()]
        (package / f"{weight}.css").write_text("\n".join(rules), encoding="utf-8")
        for n in SLICES:
            for kind in ("woff2", "woff"):
                (package / "files" / f"noto-sans-sc-{n}-{weight}-normal.{kind}").write_bytes(b"f")
    return folder


def test_without_the_package_the_error_names_the_install_command(tmp_path: Path) -> None:
    project = fake_project(tmp_path)
    (site_font.package_dir(project) / "package.json").unlink()
    with pytest.raises(site_font.FontError, match="not installed") as error:
        site_font.installed(project)
    assert "npm ci --prefix tools/site-font --no-audit --no-fund" in str(error.value)


def test_another_version_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    project = fake_project(tmp_path, version="5.2.9")
    with pytest.raises(site_font.FontError, match=r"5\.2\.9, package\.json pins 5\.3\.0") as error:
        site_font.installed(project)
    assert site_font.INSTALL in str(error.value)


def test_the_stylesheet_keeps_woff2_and_only_the_cjk_ranges(tmp_path: Path) -> None:
    font = site_font.build(site_font.installed(fake_project(tmp_path)))
    rules = site_font.font_face_rules(font.css)
    # slices 1 and 2 of each weight; "latin" has no CJK character and is left out
    assert [(r["font-weight"], r["unicode-range"]) for r in rules] == [
        (str(weight), ranges)
        for weight in site_font.WEIGHTS
        for ranges in ("U+3002,U+4e00-4e10", "U+9636,U+ff0c")
    ]
    woff2_source = re.compile(r"url\(files/[\w-]+\.woff2\) format\('woff2'\)")
    assert all(woff2_source.fullmatch(rule["src"]) for rule in rules)
    assert sorted(font.files) == sorted(
        f"{site_font.TARGET}/files/noto-sans-sc-{n}-{weight}-normal.woff2"
        for weight in site_font.WEIGHTS
        for n in ("1", "2")
    )
    assert all(path.suffix == ".woff2" and path.is_file() for path in font.files.values())
    assert font.license.name == "LICENSE"


def test_a_rule_without_a_woff2_source_is_an_error(tmp_path: Path) -> None:
    package = site_font.installed(fake_project(tmp_path))
    css = package / "400.css"
    css.write_text(css.read_text(encoding="utf-8").replace(".woff2)", ".ttf)"), encoding="utf-8")
    with pytest.raises(site_font.FontError, match="exactly one woff2 source"):
        site_font.build(package)


@pytest.mark.parametrize(
    ("ranges", "cjk"),
    [
        ("U+0-ff", ""),
        ("U+2e00-2e80", "U+2e80"),
        ("U+9fff-f900", "U+9fff,U+f900"),
        ("U+1f300-1f37e,U+20000-2000f", "U+20000-2000f"),
        ("U+ff00-ffff", "U+ff00-ffef"),
    ],
)
def test_cjk_only_cuts_ranges_to_the_cjk_blocks(ranges: str, cjk: str) -> None:
    assert site_font.cjk_only(site_font.parse_ranges(ranges)) == cjk


def test_a_wildcard_range_is_not_read_silently() -> None:
    with pytest.raises(site_font.FontError, match="does not read"):
        site_font.parse_ranges("U+4??")


def test_mkdocs_yml_runs_the_hook_and_links_its_stylesheet_before_the_stacks() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^hooks:\n  - tools/site_font\.py$", config, re.MULTILINE)
    stylesheets = re.search(r"^extra_css:\n((?:  - .*\n)+)", config, re.MULTILINE)
    assert stylesheets is not None
    assert stylesheets.group(1).split() == ["-", site_font.STYLESHEET, "-", "stylesheets/fonts.css"]


def test_the_site_stacks_put_the_family_first_and_keep_the_theme_fonts() -> None:
    """First, because Chromium leaves boxes when the family follows two names of one system
    font (Helvetica, Arial) or the generic family; its faces cover only CJK characters, so the
    theme's fonts after it still set all other text."""
    css = (ROOT / "docs" / "stylesheets" / "fonts.css").read_text(encoding="utf-8")
    stacks = {
        name: [family.strip() for family in value.split(",")]
        for name, value in re.findall(r"(--md-(?:text|code)-font-family):([^;]*);", css)
    }
    family = f'"{site_font.FAMILY}"'
    assert stacks == {
        "--md-text-font-family": [
            "var(--md-text-font",
            "_)",
            family,
            "-apple-system",
            "BlinkMacSystemFont",
            "Helvetica",
            "Arial",
            "sans-serif",
        ],
        "--md-code-font-family": [
            "var(--md-code-font",
            "_)",
            family,
            "SFMono-Regular",
            "Consolas",
            "Menlo",
            "monospace",
        ],
    }


def test_the_matrix_pages_get_the_font_after_the_harness_stylesheet() -> None:
    page = "<!doctype html><title>m</title><style>body{font:14px system-ui}</style><h1>x</h1>"
    written = site_conformance.with_site_font(page)
    assert written.startswith(page.partition("</style>")[0] + "</style>\n<link rel=stylesheet")
    assert f'href="../{site_font.STYLESHEET}"' in written
    assert f'body{{font-family:"{site_font.FAMILY}",system-ui,sans-serif}}' in written
    assert written.endswith("</style><h1>x</h1>")
    with pytest.raises(SystemExit, match="no </style>"):
        site_conformance.with_site_font("<h1>x</h1>")
