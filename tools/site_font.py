"""The CJK web font of the documentation site: an mkdocs hook (``hooks:`` in ``mkdocs.yml``).

Many pages carry Chinese text (the error pages are bilingual), and a reader's machine may have no
CJK font, where that text would show as empty boxes. So the site ships its own: Noto Sans SC
(SIL Open Font License 1.1), from the npm package ``@fontsource/noto-sans-sc``, pinned in
``tools/site-font/package.json`` and its lock file and installed with::

    npm ci --prefix tools/site-font --no-audit --no-fund

(the ``docs`` session does it). Without it, or with another version of it, the build fails and
names that command. The hook adds to the site, under ``assets/fonts/noto-sans-sc/``:

- ``noto-sans-sc.css``: the package's ``@font-face`` rules for the weights the pages use (400;
  700 for the bold table headers), each a slice of the font by ``unicode-range``, so that a
  browser downloads only the slices that hold characters the page shows. Each rule keeps only
  its woff2 source (its woff fallback is dropped: every browser the theme supports reads woff2)
  and only the CJK part of its ``unicode-range`` (``CJK_RANGES``); a rule left with none is
  dropped. The package's slices also cover Latin, symbols and emoji; restricted, the family can
  come first in the theme's font stacks and still draw only CJK characters, every other one
  falling through to the system fonts after it. It must come first: Chromium (156, Linux)
  draws many of a segmented font's characters as empty boxes when the family follows the
  generic family, or two names that resolve to the same system font (the theme's Helvetica
  and Arial are both Liberation Sans there);
- the woff2 files those rules name, and nothing else of the package;
- ``LICENSE.txt``, the font's licence, which travels with the font.

``mkdocs.yml`` lists that stylesheet in ``extra_css``; ``docs/stylesheets/fonts.css`` puts the
family first in the theme's font stacks. No request leaves the site. ``tools/check_site.py`` checks
in Chromium that the Chinese text is drawn with it, character for character.

The functions below need only the standard library (the tests run without mkdocs); the hooks at
the end import mkdocs when it calls them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The npm project that installs the font (package.json, package-lock.json; node_modules/).
PROJECT = ROOT / "tools" / "site-font"
NAME = "@fontsource/noto-sans-sc"
FAMILY = "Noto Sans SC"
#: The weights the pages use: the text (400; the theme's lighter headings fall back to it) and
#: the table headers (700: errors/ and flowcast/ have Chinese in theirs).
WEIGHTS = (400, 700)
#: Where the font goes in the site, and the stylesheet that mkdocs.yml's extra_css names.
TARGET = "assets/fonts/noto-sans-sc"
STYLESHEET = f"{TARGET}/noto-sans-sc.css"
LICENSE = f"{TARGET}/LICENSE.txt"
INSTALL = "npm ci --prefix tools/site-font --no-audit --no-fund"
#: The characters the shipped font draws (inclusive code point ranges): CJK radicals, symbols and
#: punctuation, kana, bopomofo, the enclosed and compatibility forms, the unified ideographs with
#: extension A, compatibility ideographs, vertical and compatibility forms, half- and full-width
#: forms, and the supplementary ideographic planes. Everything else keeps the system fonts.
CJK_RANGES = (
    (0x2E80, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
    (0x20000, 0x3FFFF),
)

_RULE = re.compile(r"@font-face\s*\{([^}]*)\}")
#: One woff2 source of a rule's ``src``: ``url(./files/NAME.woff2) format('woff2')``.
_WOFF2 = re.compile(
    r"""url\(\s*['"]?(?:\./)?files/([A-Za-z0-9._-]+\.woff2)['"]?\s*\)"""
    r"""\s*format\(\s*['"]woff2['"]\s*\)"""
)


class FontError(Exception):
    """The font package is missing, of another version, or not laid out as expected."""


@dataclass(frozen=True)
class Font:
    """What the hook adds to the site: the stylesheet's text, and the woff2 files it names (site
    path -> the file in the package)."""

    css: str
    files: dict[str, Path]
    license: Path


def package_dir(project: Path = PROJECT) -> Path:
    return project / "node_modules" / Path(*NAME.split("/"))


def pinned_version(project: Path = PROJECT) -> str:
    """The exact version that ``package.json`` pins."""
    manifest = json.loads((project / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"][NAME])


def installed(project: Path = PROJECT) -> Path:
    """The installed package's folder; a FontError naming the install command when it is missing
    or is not the pinned version."""
    package = package_dir(project)
    wanted = pinned_version(project)
    manifest = package / "package.json"
    if not manifest.is_file():
        raise FontError(
            f"the site's CJK font ({NAME} {wanted}) is not installed (no {manifest}); "
            f"run: {INSTALL}"
        )
    version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    if version != wanted:
        raise FontError(
            f"the site's CJK font is {NAME} {version}, package.json pins {wanted}; run: {INSTALL}"
        )
    return package


def font_face_rules(css: str) -> list[dict[str, str]]:
    """The declarations of each ``@font-face`` rule of a stylesheet, in order."""
    rules = []
    for body in _RULE.findall(css):
        declarations = {}
        for item in body.split(";"):
            name, colon, value = item.partition(":")
            if colon:
                declarations[name.strip()] = value.strip()
        rules.append(declarations)
    return rules


def woff2_only(rule: dict[str, str], where: str) -> tuple[str, dict[str, str]]:
    """The rule's woff2 file name, and the rule with only that source."""
    found = _WOFF2.findall(rule.get("src", ""))
    if len(found) != 1:
        raise FontError(f"{where}: a @font-face rule without exactly one woff2 source: {rule}")
    return found[0], {**rule, "src": f"url(files/{found[0]}) format('woff2')"}


def parse_ranges(value: str) -> list[tuple[int, int]]:
    """A ``unicode-range`` value (``U+4e00-9fff,U+3002``; no wildcards) as inclusive ranges."""
    ranges = []
    for item in value.split(","):
        item = item.strip()
        if not re.fullmatch(r"[Uu]\+[0-9A-Fa-f]{1,6}(-[0-9A-Fa-f]{1,6})?", item):
            raise FontError(f"a unicode-range item this hook does not read: {item!r}")
        first, _, last = item[2:].partition("-")
        ranges.append((int(first, 16), int(last or first, 16)))
    return ranges


def cjk_only(ranges: list[tuple[int, int]]) -> str:
    """The part of ``ranges`` inside CJK_RANGES, as a ``unicode-range`` value ('' if none)."""
    kept = []
    for first, last in ranges:
        for low, high in CJK_RANGES:
            start, end = max(first, low), min(last, high)
            if start <= end:
                kept.append(f"U+{start:x}" if start == end else f"U+{start:x}-{end:x}")
    return ",".join(kept)


def build(package: Path, weights: tuple[int, ...] = WEIGHTS) -> Font:
    """The stylesheet of ``weights`` (one rule per slice with CJK characters, woff2 only, its
    unicode-range cut to CJK_RANGES, compact) and its files."""
    lines = [
        f"/* {FAMILY} ({NAME} {_version(package)}, SIL Open Font License 1.1: LICENSE.txt), "
        f"weights {', '.join(map(str, weights))}; written by tools/site_font.py */"
    ]
    files: dict[str, Path] = {}
    for weight in weights:
        source = package / f"{weight}.css"
        if not source.is_file():
            raise FontError(f"{source} does not exist (is {NAME} laid out as its version 5?)")
        rules = font_face_rules(source.read_text(encoding="utf-8"))
        if not rules:
            raise FontError(f"{source} has no @font-face rule")
        for rule in rules:
            if rule.get("font-family", "").strip("'\"") != FAMILY:
                raise FontError(f"{source}: a rule for another family: {rule}")
            if "unicode-range" not in rule:
                raise FontError(f"{source}: a rule without unicode-range: {rule}")
            cjk = cjk_only(parse_ranges(rule["unicode-range"]))
            if not cjk:
                continue
            name, rule = woff2_only({**rule, "unicode-range": cjk}, str(source))
            path = package / "files" / name
            if not path.is_file():
                raise FontError(f"{source} names {name}, which the package does not have")
            files[f"{TARGET}/files/{name}"] = path
            lines.append("@font-face{" + ";".join(f"{k}:{v}" for k, v in rule.items()) + "}")
    license_file = package / "LICENSE"
    if not license_file.is_file():
        raise FontError(f"{license_file} does not exist")
    return Font(css="\n".join(lines) + "\n", files=files, license=license_file)


def _version(package: Path) -> str:
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    return str(manifest.get("version"))


# -- the mkdocs hooks ----------------------------------------------------------------------------

_font: Font | None = None


def on_config(config: Any) -> Any:
    """Fail early, with the command to run, when the font is not installed."""
    from mkdocs.exceptions import PluginError

    global _font
    try:
        _font = build(installed())
    except FontError as error:
        raise PluginError(f"tools/site_font.py: {error}") from None
    if STYLESHEET not in [str(entry) for entry in config.extra_css]:
        raise PluginError(f"tools/site_font.py: mkdocs.yml's extra_css must list {STYLESHEET}")
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the stylesheet, the woff2 files and the licence to the site."""
    from mkdocs.structure.files import File

    assert _font is not None, "on_config runs first"
    files.append(File.generated(config, STYLESHEET, content=_font.css))
    files.append(File.generated(config, LICENSE, abs_src_path=str(_font.license)))
    for uri, path in _font.files.items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
