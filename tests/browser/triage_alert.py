#!/usr/bin/env python3
"""Signs in to a running `pitwall serve` in headless Chromium and acks an alert through its form.

    tests/browser/triage_alert.py BASE_URL PROJECT ALERT_ID TOKEN_NAME [SCREENSHOT_PNG]

The token is read from the environment variable PITWALL_TOKEN (never from the command line).
As a person would: opens /p/PROJECT/alerts (and checks it is sent to the sign-in form), types
the token into the form and submits it, checks the alerts page shows the triage forms, picks
"ack" in the form of ALERT_ID, types a note and submits, and checks the alert's page it lands
on shows the new status and the change recorded under TOKEN_NAME. Throughout it fails
on a console error or warning, an uncaught exception, a JavaScript dialog, an <img> or
<script> that hostile names smuggled in, or any request that leaves BASE_URL.
Exit status: 0 ok, 1 check failed, 2 usage error, 3 Chromium not found.
"""

import json
import os
import sys
import time

from cdp import check_events, fail, run_with_page, screenshot

NOTE = "looking into it <b>now</b>"


def wait_for(page, expr, what):
    for _ in range(150):
        if page.eval(f"document.readyState === 'complete' && !!({expr})"):
            return True
        time.sleep(0.1)
    fail(f"timed out waiting for {what}")
    return False


def click(page, selector):
    b = page.eval(f"(function(){{var r=document.querySelector({json.dumps(selector)})"
                  ".getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2];})()")
    page.mouse("mouseMoved", b[0], b[1])
    page.mouse("mousePressed", b[0], b[1], buttons=1)
    page.mouse("mouseReleased", b[0], b[1])


def type_into(page, selector, text):
    page.eval(f"document.querySelector({json.dumps(selector)}).focus()")
    page.call("Input.insertText", text=text)


def drive(page, base, project, alert, token, name, shot):
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.call(f"{domain}.enable")
    page.call("Page.navigate", url=f"{base}/p/{project}/alerts")
    if not wait_for(page, "document.querySelector('form.signin')", "the sign-in form"):
        return
    print("ok: not signed in, /alerts sent the browser to " + page.eval("location.pathname"))
    type_into(page, "form.signin input[name=token]", token)
    click(page, "form.signin button")
    form = f"form.triage[action$='alerts/{alert}']"
    if not wait_for(page, f"document.querySelector({json.dumps(form)})", "the triage form"):
        return
    print("ok: signed in; the alerts page offers a triage form for " + alert)
    smuggled = page.eval("document.querySelectorAll('main img, main script').length")
    if smuggled:
        fail(f"{smuggled} <img> or <script> elements in <main>: hostile names became markup")
    if page.eval("document.cookie") != "":
        fail("the session cookie is readable from scripts (it must be HttpOnly)")
    page.eval(f"document.querySelector({json.dumps(form + ' select[name=status]')}).value"
              " = 'acknowledged'")
    type_into(page, form + " input[name=note]", NOTE)
    screenshot(page, shot)
    click(page, form + " button")
    if not wait_for(page, "document.querySelector('section.alert-changes td')",
                    "the alert's page with its changes"):
        return
    text = page.eval("document.querySelector('main').innerText")
    last = page.eval("document.querySelector('section.alert-changes tbody tr:last-child')"
                     ".innerText")
    if "→ acknowledged" not in last or NOTE not in last or name not in last:
        fail(f"the alert's last change is not the ack with its note: {last!r} in {text!r}")
    else:
        print("ok: the form acked the alert; its page shows the change: "
              + page.eval("document.querySelector('section.alert-changes tbody tr:last-child')"
                        ".innerText")
              .replace("\t", " | "))
    screenshot(page, shot and shot[: -len(".png")] + "-acked.png")
    page.eval("1")
    check_events(page, allowed=(base + "/", "data:"))


def main():
    if len(sys.argv) < 5 or not os.environ.get("PITWALL_TOKEN"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    base, project, alert, name = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], sys.argv[4]
    shot = sys.argv[5] if len(sys.argv) > 5 else None
    token = os.environ["PITWALL_TOKEN"]
    code = run_with_page(lambda page: drive(page, base, project, alert, token, name, shot))
    if code:
        return code
    print("the alert was acked through the form")
    return 0


if __name__ == "__main__":
    sys.exit(main())
