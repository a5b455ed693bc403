#!/usr/bin/env python3
"""Drives a benchmark page's interactive history chart in headless Chromium, as a person would.

    tests/browser/drag_chart.py PAGE_HTML [SCREENSHOT_PNG]

SCREENSHOT_PNG (ending .png) is the page as loaded; beside it, `*-zoomed.png` after the drag.

Talks to Chromium over its DevTools protocol (--remote-debugging-port, a minimal websocket
client below: the standard library only, nothing to install). Loads the page from file://,
then with real mouse events: drags across the chart and checks that the visible x range
(`data-x-min`/`data-x-max`, which history.js sets from uPlot's x scale) narrowed; hovers a point
and checks the tooltip names its commit, run, median and interval; shift-drags and checks the
range moved without changing width; clicks "reset zoom" and checks the whole range is back.
Throughout it fails on a console error or warning, an uncaught exception, a JavaScript dialog
(an injected alert()), an <img> or <script> the data smuggled in, or any request that is not
file:// (the page must load nothing remote).
Exit status: 0 ok, 1 check failed, 2 usage error, 3 Chromium not found.
"""

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, client-masked."""

    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise OSError(f"websocket handshake refused: {head[:200]!r}")

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise OSError("websocket closed")
            buf += chunk
        return buf

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + body)

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise OSError("websocket closed by Chromium")
            if opcode in (0x9, 0xA):
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    """One page target: commands by id, events kept in order."""

    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def mouse(self, kind, x, y, buttons=0, modifiers=0):
        params = {"type": kind, "x": x, "y": y, "modifiers": modifiers, "buttons": buttons}
        if kind in ("mousePressed", "mouseReleased"):
            params.update(button="left", clickCount=1)
        elif buttons:
            params["button"] = "left"
        self.call("Input.dispatchMouseEvent", **params)

    def drag(self, x0, x1, y, modifiers=0):
        self.mouse("mouseMoved", x0, y, modifiers=modifiers)
        self.mouse("mousePressed", x0, y, buttons=1, modifiers=modifiers)
        for i in range(1, 11):
            self.mouse("mouseMoved", x0 + (x1 - x0) * i / 10, y, buttons=1, modifiers=modifiers)
        self.mouse("mouseReleased", x1, y, modifiers=modifiers)


failures = []


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    failures.append(msg)


def chromium():
    c = os.environ.get("CHROMIUM")
    if c:
        return c
    for name in ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def start(chrome, profile):
    proc = subprocess.Popen(
        [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=1280,1600",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, "DevToolsActivePort")
    for _ in range(300):
        if os.path.exists(port_file):
            text = open(port_file).read().split()
            if text:
                port = int(text[0])
                break
        time.sleep(0.1)
    else:
        proc.kill()
        raise RuntimeError("Chromium did not open its DevTools port")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
        targets = json.load(r)
    page = next(t for t in targets if t["type"] == "page")
    return proc, Page(WebSocket(page["webSocketDebuggerUrl"]))


def x_range(page):
    r = page.eval("[document.getElementById('history-plot').getAttribute('data-x-min'),"
                  " document.getElementById('history-plot').getAttribute('data-x-max')]")
    return float(r[0]), float(r[1])


def check_events(page):
    """Console errors, exceptions, dialogs and remote requests seen so far."""
    for e in page.events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.exceptionThrown":
            fail(f"uncaught exception: {p['exceptionDetails'].get('text')} "
                 f"{p['exceptionDetails'].get('exception', {}).get('description', '')}")
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            fail(f"console {p['type']}: {[a.get('value') for a in p.get('args', [])]}")
        elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            fail(f"log {p['entry']['level']}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        elif m == "Page.javascriptDialogOpening":
            fail(f"a JavaScript dialog opened: {p.get('message')!r}")
        elif m == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if not (url.startswith("file://") or url.startswith("data:")):
                fail(f"remote request: {url}")


def screenshot(page, path):
    if path:
        png = page.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))


def drive(page, url, shot):
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.call(f"{domain}.enable")
    page.call("Page.navigate", url=url)
    for _ in range(100):
        if page.eval("document.readyState === 'complete' && "
                     "!!document.querySelector('#history-live[data-ready]')"):
            break
        time.sleep(0.1)
    else:
        fail("the interactive chart never became ready (#history-live[data-ready])")
        return
    if page.eval("document.getElementById('history-static').hidden"):
        print("ok: the interactive chart is drawn and the static SVG hidden")
    else:
        fail("the static SVG is still shown beside the interactive chart")
    smuggled = page.eval("document.querySelectorAll('img, main script:not([type])').length")
    if smuggled:
        fail(f"{smuggled} <img> or script elements in <main>: hostile data became markup")
    rect = page.eval("(function(){var r=document.querySelector('#history-plot .u-over')"
                     ".getBoundingClientRect();return [r.left,r.top,r.width,r.height];})()")
    left, top, width, height = rect
    y = top + height / 2
    full = x_range(page)
    screenshot(page, shot)
    page.drag(left + width * 0.3, left + width * 0.6, y)
    zoomed = x_range(page)
    if not (zoomed[0] > full[0] and zoomed[1] < full[1] and zoomed[1] - zoomed[0] < (full[1] - full[0]) * 0.6):
        fail(f"dragging did not zoom: x range {full} -> {zoomed}")
    else:
        print(f"ok: dragging zoomed the x range {full[0]:.2f}..{full[1]:.2f} to {zoomed[0]:.2f}..{zoomed[1]:.2f}")
    screenshot(page, shot and shot[: -len(".png")] + "-zoomed.png")
    page.mouse("mouseMoved", left + width * 0.5, y)
    tip = page.eval("(function(){var t=document.getElementById('history-tip');"
                    "return t.hidden ? null : t.textContent;})()")
    if not tip or "run " not in tip or "median " not in tip:
        fail(f"hovering a point showed no tooltip with its run and median: {tip!r}")
    else:
        print("ok: hovering shows " + tip.replace("\n", " | "))
    page.drag(left + width * 0.5, left + width * 0.7, y, modifiers=8)
    panned = x_range(page)
    same_width = abs((panned[1] - panned[0]) - (zoomed[1] - zoomed[0])) < 1e-6
    if not (panned[0] < zoomed[0] and same_width):
        fail(f"shift-drag did not pan: x range {zoomed} -> {panned}")
    else:
        print(f"ok: shift-drag panned to {panned[0]:.2f}..{panned[1]:.2f}")
    b = page.eval("(function(){var r=document.getElementById('history-reset')"
                  ".getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2];})()")
    page.mouse("mouseMoved", b[0], b[1])
    page.mouse("mousePressed", b[0], b[1], buttons=1)
    page.mouse("mouseReleased", b[0], b[1])
    if x_range(page) != full:
        fail(f"reset zoom did not restore {full}: {x_range(page)}")
    else:
        print("ok: reset zoom restored the whole range")
    page.eval("1")  # collect the events of the last actions
    check_events(page)


def main():
    if len(sys.argv) < 2 or not os.path.isfile(sys.argv[1]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    chrome = chromium()
    if not chrome:
        print("chromium not found (install it with: apt-get install -y chromium)", file=sys.stderr)
        return 3
    url = "file://" + os.path.abspath(sys.argv[1])
    shot = sys.argv[2] if len(sys.argv) > 2 else None
    profile = tempfile.mkdtemp()
    proc = None
    try:
        proc, page = start(chrome, profile)
        drive(page, url, shot)
    finally:
        if proc:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("the history chart zooms, pans and resets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
