#!/usr/bin/env python3
"""The browser half of bench/settings_app.sh: Debian's chromium through Playwright.

usage: settings_app_bench.py URL DOMAIN RUNS

Prints JSON: the page's load event and the moment its rows were drawn (ms from
the navigation's start, as the browser's performance timeline has them), the
number of rows drawn, and each change's round trip (ms from the click to the
page having the server's answer; the server answers after the commit).
"""
import json
import sys

from playwright.sync_api import sync_playwright

url, domain, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {"load": [], "drawn": [], "roundtrip": []}
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)   # the token for the cookie, once
    page.wait_for_selector("body[data-ready='1']")
    for i in range(runs + 3):
        page.goto("about:blank")   # a new document each time, not a same-document hash change
        page.goto(url.split("/?")[0] + "/#" + domain)
        page.wait_for_selector("body[data-ready='1']")
        timing = page.evaluate("""() => { const n = performance.getEntriesByType('navigation')[0];
                                         return [n.loadEventEnd - n.startTime, Number(document.body.dataset.readyAt) - n.startTime]; }""")
        if i >= 3:   # the first loads warm the browser's and the server's caches
            out["load"].append(timing[0])
            out["drawn"].append(timing[1])
    out["rows"] = page.locator("#pane .row").count()
    switch = page.locator("#pane input[role=switch]").first
    out["key"] = switch.get_attribute("data-key")
    for i in range(runs + 3):
        ms = page.evaluate("""(s) => new Promise((resolve) => {
            const target = String((Number(document.body.dataset.saved) || 0) + 1);
            const observer = new MutationObserver(() => {
                if (document.body.dataset.saved === target) { observer.disconnect(); resolve(performance.now() - t0); } });
            observer.observe(document.body, { attributes: true });
            const t0 = performance.now();
            s.click(); })""", switch.element_handle())
        if i >= 3:
            out["roundtrip"].append(ms)
    browser.close()
print(json.dumps(out))
