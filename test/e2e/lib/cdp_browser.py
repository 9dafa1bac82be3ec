#!/usr/bin/python3
"""Drives Debian's headless Chromium through the DevTools protocol over a pipe
(--remote-debugging-pipe: commands on the browser's fd 3, answers on its fd 4, each JSON message
ended by a NUL byte), so a page test can type, click, wait for the DOM and take a screenshot with
no WebSocket library. Used by test/e2e/proxy_colosseum_chromium.sh.

    with Browser() as b:
        b.open("http://127.0.0.1:8080/zeus/colosseum")
        b.wait_for("document.querySelector('#send') !== null")
        b.evaluate("document.querySelector('#send').click()")
        b.screenshot("out.png")
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width=1280, height=1100):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium and os.path.exists("/usr/lib/chromium/chromium"):
            chromium = "/usr/lib/chromium/chromium"  # Debian's launcher script drops fds 3 and 4
        if not chromium:
            raise BrowserError("chromium is not installed; install the Debian package 'chromium'")
        self.profile = tempfile.mkdtemp(prefix="cdp-profile-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # Above 4, so that the shell below can move them onto 3 and 4. bash, not dash: dash reads
        # only one-digit fds in redirections, and a caller (ctest, pytest) may hold fds up to 13+.
        for name in ("to_browser_r", "from_browser_w"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
            os.close(fd)
            if name == "to_browser_r":
                to_browser_r = high
            else:
                from_browser_w = high

        self.log = open(os.path.join(self.profile, "chromium.log"), "w")
        # The shell gives the browser our pipes as its fd 3 (commands in) and fd 4 (answers out).
        wire = 'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-' % (
            to_browser_r, from_browser_w, to_browser_r, from_browser_w)
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", wire, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--remote-debugging-pipe",
             "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height)],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            pass_fds=(to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id = 0
        self.buffer = b""
        self.session = None
        self.width, self.height = width, height

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.command("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], 0.5)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed its DevTools pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def command(self, method, params=None, session=True, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise BrowserError("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})

    def open(self, url):
        if self.session is None:
            target = self.command("Target.createTarget", {"url": "about:blank"}, session=False)
            attached = self.command("Target.attachToTarget",
                                    {"targetId": target["targetId"], "flatten": True},
                                    session=False)
            self.session = attached["sessionId"]
            self.command("Emulation.setDeviceMetricsOverride",
                         {"width": self.width, "height": self.height, "deviceScaleFactor": 1,
                          "mobile": False})
        self.command("Page.navigate", {"url": url})

    def block(self, patterns):
        """Fails the page's requests to URLs matching `patterns` ("*" matches anything) as network
        errors from now on; an empty list lets everything through again. Call open("about:blank")
        first to block what a page asks for as it loads."""
        self.command("Network.enable")
        self.command("Network.setBlockedURLs", {"urls": list(patterns)})

    def evaluate(self, expression):
        result = self.command("Runtime.evaluate", {"expression": expression,
                                                   "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError("%s: %s" % (expression, result["exceptionDetails"]))
        return result.get("result", {}).get("value")

    def wait_for(self, expression, timeout=20, what=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate(expression):
                    return
            except BrowserError:
                pass  # the page is still loading
            time.sleep(0.1)
        raise BrowserError("timed out waiting for " + (what or expression))

    def screenshot(self, path):
        data = self.command("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(path, "wb") as f:
            f.write(base64.b64decode(data["data"]))
