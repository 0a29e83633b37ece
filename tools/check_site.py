"""Open the built documentation site in headless Chromium and check it (the ``docs`` session).

    python tools/check_site.py [--site site]

1. Chromium: the first of ``chromium``, ``chromium-browser``, ``google-chrome`` on PATH. This
   script never installs anything: without a browser it prints the command that installs one
   (Debian and Ubuntu: ``apt-get install -y chromium``) and fails.
2. The site (``mkdocs build`` output) is served on 127.0.0.1 by a stdlib HTTP server.
3. Chromium runs headless and is driven over the DevTools protocol on a pipe
   (``--remote-debugging-pipe``: NUL-separated JSON on file descriptors 3 and 4 -- no websocket
   client, no new dependency). Each main page is loaded; console errors (``console.error``,
   uncaught exceptions, failed resource loads, i.e. ``Log.entryAdded`` at level error) fail
   the check.
4. Search: ``search/search_index.json`` must contain ``CG_MODEL_REFUSED`` with its page, and the
   home page opened with ``?q=CG_MODEL_REFUSED`` must show a search result linking to
   ``errors/CG_MODEL_REFUSED/`` (read from the live DOM after the search worker answered).

Exit status: 0 passed, 1 failed (or no browser).
"""

from __future__ import annotations

import argparse
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


_RESULTS_JS = """JSON.stringify(Array.from(
  document.querySelectorAll('.md-search-result__item a, .md-search-result__link'),
  a => a.getAttribute('href')))"""


def check_pages(executable: str, base: str, pages: tuple[str, ...]) -> list[str]:
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cg-chromium-") as profile:
        browser = DevTools(executable, profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log"):
                browser.send(f"{domain}.enable", session=session)
            for page in pages:
                url = base + page
                browser.events.clear()
                browser.send("Page.navigate", {"url": url}, session=session)
                browser.wait_for("Page.loadEventFired", session, LOAD_TIMEOUT)
                browser.pump(0.5)
                errors = console_errors(browser.events, session)
                title = browser.send(
                    "Runtime.evaluate", {"expression": "document.title"}, session=session
                )["result"].get("value", "")
                status = "ok" if not errors else f"{len(errors)} console error(s)"
                print(f"  {url}  [{title}]  {status}", flush=True)
                problems += [f"{url}: {error}" for error in errors]
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
        problems += check_pages(executable, base, PAGES)
    if problems:
        print("check_site: FAILED")
        print("\n".join(f"  {problem}" for problem in problems))
        return 1
    print(f"check_site: {len(PAGES)} pages without console errors; search finds {SEARCH_CODE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
