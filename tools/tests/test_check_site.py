"""The browser check of the docs session never installs a browser: without one it names the
command to run and fails."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import check_site
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK_SITE = ROOT / "tools" / "check_site.py"


def built_site(folder: Path) -> Path:
    """The smallest site the check accepts: a home page and a search index with the code."""
    (folder / "search").mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><title>t</title>", encoding="utf-8")
    docs = [{"location": "errors/CG_MODEL_REFUSED/", "title": "CG_MODEL_REFUSED", "text": ""}]
    (folder / "search" / "search_index.json").write_text(json.dumps({"docs": docs}), "utf-8")
    return folder


def program(folder: Path, name: str) -> None:
    """A fake program on PATH that records that it ran (it must not run)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/sh\necho ran >> "{folder}/{name}.ran"\nexit 0\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_check(site: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK_SITE), "--site", str(site)],
        env={**os.environ, "PATH": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_a_browser_it_prints_the_apt_command_and_fails_installing_nothing(
    tmp_path: Path,
) -> None:
    tools = tmp_path / "bin"
    program(tools, "apt-get")
    done = run_check(built_site(tmp_path / "site"), tools)
    sudo = "" if os.geteuid() == 0 else "sudo "
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "check_site: FAILED: no Chromium on PATH (chromium, chromium-browser, google-chrome,"
        " google-chrome-stable); this check installs nothing itself. Install one, then run it"
        " again:",
        f"  {sudo}apt-get update && {sudo}apt-get install -y chromium",
    ]
    assert not (tools / "apt-get.ran").exists()


def test_without_a_browser_or_a_package_manager_it_says_what_to_install(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = run_check(built_site(tmp_path / "site"), empty)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        "  install Chromium or Google Chrome so that `chromium` is on PATH"
    )


@pytest.mark.parametrize("name", ["chromium", "google-chrome"])
def test_a_browser_on_path_is_used(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    program(tools, name)
    monkeypatch.setenv("PATH", str(tools))
    assert check_site.find_chromium() == str(tools / name)


# -- the shipped CJK font: what the check reads from the DevTools answers --------------------------


def font(family: str, glyphs: int, *, custom: bool) -> dict[str, object]:
    return {"familyName": family, "isCustomFont": custom, "glyphCount": glyphs}


def test_every_cjk_character_must_be_drawn_with_the_shipped_font() -> None:
    marked = [
        {"cjk": 6, "latin": 0, "text": "实例已关闭。"},
        {"cjk": 2, "latin": 5, "text": "Phase / 阶段"},
        {"cjk": 0, "latin": 4, "text": "code"},
    ]
    drawn = [
        [font("Noto Sans SC Thin", 6, custom=True)],
        [font("Liberation Sans", 8, custom=False), font("Noto Sans SC Thin", 2, custom=True)],
        [font("DejaVu Sans Mono", 4, custom=False)],
    ]
    assert check_site.glyph_problems(marked, drawn) == []
    # Boxes: a system font drew one of the two (the count falls short) ...
    drawn[1] = [font("Liberation Sans", 9, custom=False), font("Noto Sans SC Thin", 1, custom=True)]
    # ... and the Latin text went to the web font.
    drawn[2] = [font("Noto Sans SC Thin", 4, custom=True)]
    # A system font of the same name is not the shipped one.
    drawn[0] = [font("Noto Sans SC", 6, custom=False)]
    problems = check_site.glyph_problems(marked, drawn)
    assert [problem.split(" (")[0] for problem in problems] == [
        "6 CJK characters, 0 glyphs drawn with Noto Sans SC",
        "2 CJK characters, 1 glyphs drawn with Noto Sans SC",
        "no CJK character, 4 glyphs drawn with Noto Sans SC",
    ]


def test_font_requests_are_measured_and_failures_reported() -> None:
    def event(method: str, request_id: str, **params: object) -> dict[str, object]:
        return {"method": method, "sessionId": "s", "params": {"requestId": request_id, **params}}

    base = "http://127.0.0.1:1/assets/fonts/noto-sans-sc/files/"
    events = [
        event("Network.requestWillBeSent", "1", type="Font", request={"url": base + "a.woff2"}),
        event("Network.requestWillBeSent", "2", type="Font", request={"url": base + "b.woff2"}),
        event("Network.requestWillBeSent", "3", type="Font", request={"url": base + "c.woff2"}),
        event("Network.requestWillBeSent", "4", type="Stylesheet", request={"url": "x.css"}),
        event("Network.responseReceived", "1", response={"status": 200}),
        event("Network.loadingFinished", "1", encodedDataLength=1234),
        event("Network.responseReceived", "2", response={"status": 404}),
        event("Network.loadingFinished", "2", encodedDataLength=10),
        event("Network.loadingFailed", "3", errorText="net::ERR_FAILED"),
        event("Network.loadingFinished", "4", encodedDataLength=99),
        {**event("Network.loadingFailed", "1", errorText="other tab"), "sessionId": "t"},
    ]
    finished, failed = check_site.font_requests(events, "s")
    assert finished == [(base + "a.woff2", 200, 1234), (base + "b.woff2", 404, 10)]
    assert failed == [
        f"font request answered 404: {base}b.woff2",
        f"font request failed (net::ERR_FAILED): {base}c.woff2",
    ]


def test_the_page_script_counts_the_characters_of_the_font_ranges() -> None:
    cjk_class = check_site.cjk_class()
    assert cjk_class.startswith("[\\u{2e80}-\\u{9fff}")
    assert cjk_class.count("-") == len(check_site.site_font.CJK_RANGES)
    assert "%s" in check_site._FONT_MARK_JS
