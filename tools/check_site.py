"""Open the built documentation site in headless Chromium and check it (the ``docs`` session).

    python tools/check_site.py [--site site] [--screenshot FILE]

1. Chromium: the first of ``chromium``, ``chromium-browser``, ``google-chrome`` on PATH. This
   script never installs anything: without a browser it prints the command that installs one
   (Debian and Ubuntu: ``apt-get install -y chromium``) and fails.
2. The site (``mkdocs build`` output) is served on 127.0.0.1 by a stdlib HTTP server.
3. Chromium runs headless and is driven over the DevTools protocol on a pipe
   (``--remote-debugging-pipe``: NUL-separated JSON on file descriptors 3 and 4 -- no websocket
   client, no new dependency). Each main page is loaded; console errors (``console.error``,
   uncaught exceptions, failed resource loads, i.e. ``Log.entryAdded`` at level error) fail
   the check.
4. The Chinese text is drawn with a real glyph, from the font the site ships (Noto Sans SC,
   ``tools/site_font.py``), on any machine, CJK font installed or not.

   - On the bilingual page ``errors/CG_GRAPH_CLOSED/``, loaded first and with the browser cache
     off, once ``document.fonts.ready`` has resolved:
     ``document.fonts.load('16px "Noto Sans SC"', <the page's Han characters>)`` must give a
     non-empty list of faces of that family, all ``loaded``, and ``document.fonts.check`` of the
     same must be true; no font face may have failed (``error``) and no font request may have
     failed (``Network.loadingFailed`` or an HTTP status outside 2xx). It prints the woff2
     slices the page downloaded and their bytes. ``--screenshot FILE`` saves a PNG of the top
     of that page (``Page.captureScreenshot``), to look at.
   - On every page, by what the renderer says it drew each element's own text with
     (``CSS.getPlatformFontsForNode``): every laid-out element of the article that holds CJK
     characters (of the ranges the font covers) must have had exactly that many glyphs drawn by
     the web font -- fewer means a system font drew the others, as empty boxes where there is
     no CJK font -- and, on the bilingual page, no element of Latin text without CJK any (Latin
     text keeps the system fonts). Font loading alone does not prove it: with the family placed
     after the theme's Helvetica and Arial, every slice loaded and Chromium still drew boxes.
5. Search: ``search/search_index.json`` must contain ``CG_MODEL_REFUSED`` with its page, and the
   home page opened with ``?q=CG_MODEL_REFUSED`` must show a search result linking to
   ``errors/CG_MODEL_REFUSED/`` (read from the live DOM after the search worker answered).

Exit status: 0 passed, 1 failed (or no browser).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import site_font  # the font the site ships: its family, the characters it draws

ROOT = Path(__file__).resolve().parent.parent
SEARCH_CODE = "CG_MODEL_REFUSED"
PAGES = (
    "",
    "quickstart/",
    "concepts/",
    "documents/",
    "surfaces/sdk/",
    "surfaces/tools/",
    "surfaces/mcp/",
    "surfaces/cli/",
    "errors/",
    f"errors/{SEARCH_CODE}/",
    "contract/",
    "contract/config/",
    "conformance/",
    "flowcast/",
    "benchmarks/",
    # written in the docs build by tools/site_conformance.py, from a run of the suite
    "conformance/matrix.html",
    "conformance/matrix-typescript.html",
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
)
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LOAD_TIMEOUT = 30.0
SEARCH_TIMEOUT = 30.0
#: The bilingual page whose Chinese text must be drawn with the shipped font.
FONT_PAGE = "errors/CG_GRAPH_CLOSED/"
FONT_FAMILY = site_font.FAMILY


# -- Chromium ------------------------------------------------------------------------------------


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


#: What to run when no browser is found, per package manager present (the first one found wins).
INSTALL_COMMANDS = (
    ("apt-get", "apt-get update && apt-get install -y chromium"),
    ("dnf", "dnf install -y chromium"),
    ("brew", "brew install --cask chromium"),
)


def install_hint() -> str:
    """The command that installs a browser on this system, for the failure message."""
    for manager, command in INSTALL_COMMANDS:
        if shutil.which(manager):
            prefix = "" if manager == "brew" or os.geteuid() == 0 else "sudo "
            return prefix + command.replace("&& ", "&& " + prefix)
    return "install Chromium or Google Chrome so that `chromium` is on PATH"


class DevTools:
    """A Chromium process driven over ``--remote-debugging-pipe``."""

    def __init__(self, executable: str, profile: str) -> None:
        # The browser reads commands from fd 3 and writes answers to fd 4. The child's ends are
        # first moved above 10 (close-on-exec, so nothing else inherits them), then put on 3
        # and 4 in the child just before exec; every other descriptor of this process is
        # close-on-exec (PEP 446), so ``close_fds=False`` passes exactly 0-4.
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        child_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_browser_read, from_browser_write):
            os.close(fd)

        def wire_pipes() -> None:
            os.dup2(child_read, 3)
            os.dup2(child_write, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            close_fds=False,
            preexec_fn=wire_pipes,  # only dup2 between fork and exec
        )
        os.close(child_read)
        os.close(child_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self._stderr: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                tail = "\n".join(self._stderr[-10:])
                raise RuntimeError(f"Chromium closed the DevTools pipe:\n{tail}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        result: dict[str, Any] = json.loads(message)
        return result

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            command["sessionId"] = session
        os.write(self._to_browser, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + LOAD_TIMEOUT
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                answer: dict[str, Any] = message.get("result", {})
                return answer
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, session: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(index)
            message = self._read_message(deadline)
            if "method" in message:
                self.events.append(message)

    def pump(self, seconds: float) -> None:
        """Collect events for a while (late console errors)."""
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError):
            while True:
                message = self._read_message(deadline)
                if "method" in message:
                    self.events.append(message)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)


def console_errors(events: list[dict[str, Any]], session: str) -> list[str]:
    found: list[str] = []
    for event in events:
        if event.get("sessionId") != session:
            continue
        params = event.get("params", {})
        method = event.get("method")
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = params.get("args", [])
            found.append("console.error: " + " ".join(str(a.get("value", a)) for a in args))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            found.append(f"uncaught exception: {text}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            found.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
    return found


# -- the site ------------------------------------------------------------------------------------


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def check_search_index(site: Path) -> list[str]:
    index = site / "search" / "search_index.json"
    if not index.is_file():
        return [f"{index} does not exist (is the search plugin enabled?)"]
    docs = json.loads(index.read_text(encoding="utf-8")).get("docs", [])
    hits = [d["location"] for d in docs if SEARCH_CODE in d.get("title", "") + d.get("text", "")]
    if not any(location.startswith(f"errors/{SEARCH_CODE}/") for location in hits):
        return [f"search_index.json has no entry for errors/{SEARCH_CODE}/ (hits: {hits[:5]})"]
    return []


# -- the shipped CJK font ------------------------------------------------------------------------

#: After the fonts have settled (and two frames were drawn): marks every element of the page's
#: article that is laid out and holds CJK characters (of the ranges the shipped font covers) in
#: its own text nodes, which ``CSS.getPlatformFontsForNode`` reports on -- and, with ``latinToo``,
#: every one that holds Latin letters -- and answers them with their counts, and the page's
#: distinct Han characters.
_FONT_MARK_JS = r"""(async (cjkClass, latinToo) => {
  await document.fonts.ready;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const root = document.querySelector('article') || document.body;
  const cjk = new RegExp(cjkClass, 'gu'), han = /\p{Script=Han}/gu, latin = /[A-Za-z]/g;
  const marked = [];
  for (const element of root.querySelectorAll('*')) {
    if (!element.getClientRects().length) continue;
    let own = '';
    for (const node of element.childNodes) if (node.nodeType === Node.TEXT_NODE) own += node.data;
    const counts = {cjk: (own.match(cjk) || []).length, latin: (own.match(latin) || []).length};
    if (!counts.cjk && !(latinToo && counts.latin)) continue;
    element.setAttribute('data-cg-font-check', String(marked.length));
    marked.push({...counts, text: own.trim().replace(/\s+/g, ' ').slice(0, 50)});
  }
  const chars = [...new Set(root.innerText.match(han) || [])].join('');
  return JSON.stringify({marked, chars});
})(%s, %s)"""


def cjk_class() -> str:
    """``site_font.CJK_RANGES`` as a character class of a JavaScript regular expression (u)."""
    return "[" + "".join(f"\\u{{{a:x}}}-\\u{{{b:x}}}" for a, b in site_font.CJK_RANGES) + "]"


#: Loads the family for the page's Han characters, as the brief of the check says: the faces
#: ``document.fonts.load`` gives, ``document.fonts.check``, and the faces that failed to load.
_FONT_LOAD_JS = """(async (family, chars) => {
  const font = `16px "${family}"`;
  const faces = await document.fonts.load(font, chars);
  return JSON.stringify({
    faces: faces.map(f => ({family: f.family.replace(/^["']|["']$/g, ''), weight: f.weight,
                            status: f.status})),
    check: document.fonts.check(font, chars),
    failed: Array.from(document.fonts).filter(f => f.status === 'error').map(
      f => `${f.family} ${f.weight} ${f.unicodeRange.slice(0, 60)}`),
  });
})(%s, %s)"""

#: The page across its width, from its article's title to the article's first code block, in
#: page coordinates.
_CLIP_JS = """(() => {
  const article = document.querySelector('article'), title = article.querySelector('h1');
  const end = article.querySelector('.highlight, pre');
  const top = title.getBoundingClientRect().top - 16;
  const bottom = end ? end.getBoundingClientRect().top : article.getBoundingClientRect().bottom;
  return JSON.stringify({x: 0, y: top + scrollY, width: document.documentElement.clientWidth,
                         height: Math.min(bottom - top, 2000), scale: 1});
})()"""

FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".otf")


def font_requests(
    events: list[dict[str, Any]], session: str
) -> tuple[list[tuple[str, int, int]], list[str]]:
    """The font requests among the Network events of ``session``: (url, HTTP status, bytes
    received) for each that finished, and a message for each that failed."""
    urls: dict[str, str] = {}
    status: dict[str, int] = {}
    finished: list[tuple[str, int, int]] = []
    failed: list[str] = []
    for event in events:
        if event.get("sessionId") != session:
            continue
        params = event.get("params", {})
        request = params.get("requestId")
        method = event.get("method")
        if method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if params.get("type") == "Font" or url.split("?")[0].endswith(FONT_SUFFIXES):
                urls[request] = url
        elif request not in urls:
            continue
        elif method == "Network.responseReceived":
            status[request] = int(params.get("response", {}).get("status", 0))
        elif method == "Network.loadingFinished":
            code = status.get(request, 0)
            finished.append((urls[request], code, int(params.get("encodedDataLength", 0))))
            if not 200 <= code < 300:
                failed.append(f"font request answered {code}: {urls[request]}")
        elif method == "Network.loadingFailed":
            failed.append(f"font request failed ({params.get('errorText')}): {urls[request]}")
    return finished, failed


def glyph_problems(marked: list[dict[str, Any]], fonts: list[list[dict[str, Any]]]) -> list[str]:
    """What ``CSS.getPlatformFontsForNode`` says against the shipped font, element by element
    (``marked[i]`` and ``fonts[i]``): the web font must have drawn exactly as many glyphs as the
    element has CJK characters -- fewer, and a system font drew the others, which on a machine
    without a CJK font are empty boxes -- and none in an element without CJK characters (Latin
    text keeps the system fonts). The web font's own name for itself is the family's with a
    style ("Noto Sans SC Thin"), hence the prefix."""
    problems: list[str] = []
    for element, used in zip(marked, fonts, strict=True):
        shipped = sum(
            int(font.get("glyphCount", 0))
            for font in used
            if font.get("isCustomFont") and str(font.get("familyName", "")).startswith(FONT_FAMILY)
        )
        if shipped == element["cjk"]:
            continue
        drawn = ", ".join(
            f"{font.get('familyName')}{' (web font)' if font.get('isCustomFont') else ''}: "
            f"{font.get('glyphCount')}"
            for font in used
        )
        what = f"{element['cjk']} CJK characters" if element["cjk"] else "no CJK character"
        problems.append(
            f"{what}, {shipped} glyphs drawn with {FONT_FAMILY} (glyphs by font: "
            f"{drawn or 'none'}): {element['text']!r}"
        )
    return problems


def drawn_with_font(
    browser: DevTools, session: str, *, latin: bool
) -> tuple[dict[str, Any], list[str]]:
    """The loaded page's marked elements and Han characters (``_FONT_MARK_JS``), and what
    ``glyph_problems`` finds in them. Needs the DOM and CSS domains enabled."""
    page: dict[str, Any] = evaluate(
        browser, session, _FONT_MARK_JS % (json.dumps(cjk_class()), json.dumps(latin))
    )
    root = browser.send("DOM.getDocument", {"depth": 0}, session=session)["root"]["nodeId"]
    nodes = browser.send(
        "DOM.querySelectorAll",
        {"nodeId": root, "selector": "[data-cg-font-check]"},
        session=session,
    )["nodeIds"]
    fonts: list[list[dict[str, Any]]] = [[] for _ in page["marked"]]
    for node in nodes:
        pairs = browser.send("DOM.getAttributes", {"nodeId": node}, session=session)["attributes"]
        index = int(pairs[pairs.index("data-cg-font-check") + 1])
        fonts[index] = browser.send(
            "CSS.getPlatformFontsForNode", {"nodeId": node}, session=session
        )["fonts"]
    return page, glyph_problems(page["marked"], fonts)


def evaluate(browser: DevTools, session: str, expression: str) -> Any:
    """The JSON value of an expression (awaited if it is a promise) evaluated in the page."""
    answer = browser.send(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session=session,
    )
    if "exceptionDetails" in answer:
        details = answer["exceptionDetails"]
        raise RuntimeError(details.get("exception", {}).get("description") or details["text"])
    return json.loads(answer["result"]["value"])


def check_font(
    browser: DevTools, session: str, base: str, site: Path, screenshot: Path | None
) -> list[str]:
    """Item 4 of the module's docstring, on FONT_PAGE."""
    url = base + FONT_PAGE
    browser.send("Network.setCacheDisabled", {"cacheDisabled": True}, session=session)
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    browser.events.clear()
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait_for("Page.loadEventFired", session, LOAD_TIMEOUT)
    page, glyphs = drawn_with_font(browser, session, latin=True)
    browser.pump(0.5)
    # What the page itself downloaded, before the check asks for more.
    downloaded, failed = font_requests(browser.events, session)
    problems = [f"{url}: {message}" for message in failed]
    problems += [f"{url}: {problem}" for problem in glyphs]
    if screenshot is not None:
        clip = evaluate(browser, session, _CLIP_JS)
        image = browser.send(
            "Page.captureScreenshot",
            {"format": "png", "clip": clip, "captureBeyondViewport": True},
            session=session,
        )["data"]
        screenshot.write_bytes(base64.b64decode(image))
        print(f"  {url}  screenshot: {screenshot}", flush=True)
    chars = page["chars"]
    faces: list[dict[str, Any]] = []
    if not chars:
        problems.append(f"{url}: no Han character in the page's article (is it bilingual?)")
    else:
        loaded = evaluate(
            browser, session, _FONT_LOAD_JS % (json.dumps(FONT_FAMILY), json.dumps(chars))
        )
        faces = loaded["faces"]
        if not faces:
            problems.append(
                f"{url}: document.fonts.load('16px \"{FONT_FAMILY}\"') found no font face for "
                f"the page's Han characters (is the font's stylesheet in extra_css?)"
            )
        problems += [
            f"{url}: a {FONT_FAMILY} face is {face['family']} {face['weight']}, {face['status']}"
            for face in faces
            if face["family"] != FONT_FAMILY or face["status"] != "loaded"
        ]
        if not loaded["check"]:
            problems.append(f"{url}: document.fonts.check('16px \"{FONT_FAMILY}\"') is false")
        problems += [f"{url}: font face failed to load: {face}" for face in loaded["failed"]]
    slices = [request for request in downloaded if request[0].endswith(".woff2")]
    files = sum(_site_size(site, base, request[0]) for request in slices)
    received = sum(request[2] for request in slices)
    cjk = sum(element["cjk"] for element in page["marked"])
    print(
        f"  {url}  {FONT_FAMILY}: {len(chars)} distinct Han characters, {cjk} CJK characters "
        f"in {sum(1 for e in page['marked'] if e['cjk'])} elements, {len(glyphs)} not drawn "
        f"with it; {len(faces)} faces loaded for them; downloads: {len(slices)} woff2 slices, "
        f"{files} bytes of files ({received} bytes received with headers)",
        flush=True,
    )
    problems += [f"{url}: {error}" for error in console_errors(browser.events, session)]
    browser.send("Emulation.clearDeviceMetricsOverride", session=session)
    browser.send("Network.setCacheDisabled", {"cacheDisabled": False}, session=session)
    return problems


def _site_size(site: Path, base: str, url: str) -> int:
    path = site / url.removeprefix(base).split("?")[0]
    return path.stat().st_size if path.is_file() else 0


_RESULTS_JS = """JSON.stringify(Array.from(
  document.querySelectorAll('.md-search-result__item a, .md-search-result__link'),
  a => a.getAttribute('href')))"""


def check_pages(
    executable: str,
    base: str,
    pages: tuple[str, ...],
    site: Path,
    screenshot: Path | None = None,
) -> list[str]:
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cg-chromium-") as profile:
        browser = DevTools(executable, profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log", "Network", "DOM", "CSS"):
                browser.send(f"{domain}.enable", session=session)
            # First, with the cache off, so that its font downloads are its own.
            problems += check_font(browser, session, base, site, screenshot)
            for page in pages:
                url = base + page
                browser.events.clear()
                browser.send("Page.navigate", {"url": url}, session=session)
                browser.wait_for("Page.loadEventFired", session, LOAD_TIMEOUT)
                page_font, glyphs = drawn_with_font(browser, session, latin=False)
                browser.pump(0.5)
                errors = console_errors(browser.events, session)
                title = browser.send(
                    "Runtime.evaluate", {"expression": "document.title"}, session=session
                )["result"].get("value", "")
                status = "ok" if not errors else f"{len(errors)} console error(s)"
                cjk = sum(element["cjk"] for element in page_font["marked"])
                if cjk:
                    status += f"; {cjk} CJK characters, {len(glyphs)} elements not in {FONT_FAMILY}"
                print(f"  {url}  [{title}]  {status}", flush=True)
                problems += [f"{url}: {error}" for error in errors]
                problems += [f"{url}: {problem}" for problem in glyphs]
            # Search through the UI: ?q= opens the search with the query; the worker answers.
            url = f"{base}?q={SEARCH_CODE}"
            browser.events.clear()
            browser.send("Page.navigate", {"url": url}, session=session)
            browser.wait_for("Page.loadEventFired", session, LOAD_TIMEOUT)
            deadline = time.monotonic() + SEARCH_TIMEOUT
            links: list[str] = []
            while time.monotonic() < deadline:
                value = browser.send(
                    "Runtime.evaluate", {"expression": _RESULTS_JS}, session=session
                )["result"].get("value", "[]")
                links = json.loads(value)
                if any(f"errors/{SEARCH_CODE}/" in (link or "") for link in links):
                    break
                browser.pump(0.25)
            else:
                problems.append(f"{url}: no search result links to errors/{SEARCH_CODE}/ ({links})")
            found = [link for link in links if SEARCH_CODE in (link or "")]
            print(f"  {url}  search results: {len(links)}, for the code: {found[:3]}", flush=True)
            problems += [f"{url}: {error}" for error in console_errors(browser.events, session)]
        finally:
            browser.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=str(ROOT / "site"), help="the built site (mkdocs -d)")
    parser.add_argument(
        "--screenshot",
        type=Path,
        help=f"save a PNG of the top of {FONT_PAGE} (its Chinese text) to this file",
    )
    args = parser.parse_args(argv)
    site = Path(args.site).resolve()
    if not (site / "index.html").is_file():
        print(f"check_site: {site} is not a built site (run mkdocs build first)")
        return 1
    problems = check_search_index(site)
    executable = find_chromium()
    if executable is None:
        print(
            f"check_site: FAILED: no Chromium on PATH ({', '.join(CANDIDATES)}); this check "
            f"installs nothing itself. Install one, then run it again:\n  {install_hint()}"
        )
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"check_site: {executable} on {site}", flush=True)
    with serve(site) as base:
        problems += check_pages(executable, base, PAGES, site, args.screenshot)
    if problems:
        print("check_site: FAILED")
        print("\n".join(f"  {problem}" for problem in problems))
        return 1
    print(
        f"check_site: {len(PAGES)} pages without console errors, their Chinese text drawn "
        f"with {FONT_FAMILY} ({FONT_PAGE}: loaded, no failed request); search finds {SEARCH_CODE}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
