#!/usr/bin/env python3
"""The Settings app (`apphome settings`) in a real browser: Debian's chromium,
headless, driven by Playwright (from PyPI, in the venv scripts/playwright-venv.sh
makes; no browser is downloaded). One server and one browser for the whole run.

usage: settings_app_test.py --bin DIR [--prefsd] [--screenshots DIR]

With --prefsd, a prefsd serves the root: the page and `defaults` go through it
and the page's live updates come from its change notifications; without it,
everything is on the files and the live updates come from inotify.

Installs examples/ScaryBugs-v1 under a throw-away root, forces one of its keys
in a managed directory, starts `apphome settings`, and checks what a person
does on the page against the domain file on disk. Exits 1 when a check fails.
"""
import argparse
import glob
import http.client
import json
import os
import plistlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

from playwright.sync_api import expect, sync_playwright

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = "com.example.ScaryBugs"
CHROMIUM = os.environ.get("APPHOME_TEST_CHROMIUM", "/usr/bin/chromium")


class Harness:
    def __init__(self, bin_dir, prefsd):
        self.bin = bin_dir
        self.work = tempfile.mkdtemp(prefix="apphome-settings-browser-")
        self.root = os.path.join(self.work, "root")
        self.managed = os.path.join(self.work, "managed")
        os.mkdir(self.managed, 0o755)
        with open(os.path.join(self.managed, APP + ".plist"), "wb") as f:
            plistlib.dump({"userName": "team@example.com"}, f)
        os.chmod(os.path.join(self.managed, APP + ".plist"), 0o644)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.work, "APPHOME_ROOT": self.root,
                    "APPHOME_PREFSD": "off", "APPHOME_MANAGED_DIR": self.managed, "LANG": "C.UTF-8"}
        self.prefsd = None
        if prefsd:
            # A short directory: a socket's path has at most 107 bytes.
            self.socket_dir = tempfile.mkdtemp(prefix="ahs-", dir="/tmp")
            socket = os.path.join(self.socket_dir, "prefsd.sock")
            self.prefsd = subprocess.Popen([os.path.join(self.bin, "prefsd"), "--foreground", "--root", self.root, "--socket", socket],
                                           env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                wait_for(lambda: os.path.exists(socket) or self.prefsd.poll() is not None, timeout=10, what="prefsd's socket")
            finally:
                if not os.path.exists(socket):
                    self.prefsd.kill()
                    raise AssertionError(f"prefsd did not start: {self.prefsd.communicate()[1]}")
            self.env.update({"APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket})
        self.run("apphome", "install", os.path.join(REPO, "examples/ScaryBugs-v1/ScaryBugs.app"))
        self.server = subprocess.Popen([os.path.join(self.bin, "apphome"), "settings"], env=self.env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = self.server.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:") and "/?token=" in self.url, f"first line: {self.url!r}"
        parsed = urllib.parse.urlsplit(self.url)
        self.base = f"{parsed.scheme}://{parsed.netloc}"
        self.hostport = parsed.netloc
        self.domain_file = glob.glob(os.path.join(self.root, "Applications", "*", "Library", "Preferences", APP + ".plist"))

    def run(self, tool, *args):
        result = subprocess.run([os.path.join(self.bin, tool), *args], env=self.env, capture_output=True, text=True)
        assert result.returncode == 0, f"{tool} {' '.join(args)}: {result.returncode} {result.stderr}"
        return result.stdout

    def domain(self):
        """The app's domain file as stored (an empty dict when there is none)."""
        paths = glob.glob(os.path.join(self.root, "Applications", "*", "Library", "Preferences", APP + ".plist"))
        if not paths:
            return {}
        with open(paths[0], "rb") as f:
            return plistlib.load(f)

    def domain_bytes(self):
        paths = glob.glob(os.path.join(self.root, "Applications", "*", "Library", "Preferences", APP + ".plist"))
        if not paths:
            return None
        with open(paths[0], "rb") as f:
            return f.read()

    def request(self, method, path, headers, body=None):
        conn = http.client.HTTPConnection(self.hostport, timeout=5)
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, data.decode("utf-8", "replace")

    def stop(self):
        self.server.send_signal(signal.SIGTERM)
        try:
            status = self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            raise AssertionError("apphome settings did not exit within 10 s of SIGTERM")
        if self.prefsd:
            self.prefsd.terminate()
            self.prefsd.wait(timeout=10)
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        return status


def wait_for(predicate, timeout=2.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--screenshots")
    parser.add_argument("--prefsd", action="store_true")
    options = parser.parse_args()

    h = Harness(os.path.abspath(options.bin), options.prefsd)
    failures = []
    checks = []

    def check(fn):
        checks.append(fn)
        return fn

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(locale="en-US", viewport={"width": 1100, "height": 860})
        page = context.new_page()
        page.goto(h.url)
        page.wait_for_selector("body[data-ready='1']")
        cookie = next(c for c in context.cookies() if c["name"] == "apphome_settings")

        def root_page():
            """Back to the app's root page, as a person would (the back buttons)."""
            while page.locator("#pane .back").count():
                page.locator("#pane .back").click()

        @check
        def token_became_an_http_only_strict_cookie_and_left_the_address_bar():
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie
            assert "token" not in page.url, page.url
            assert page.evaluate("document.cookie") == "", "the cookie is visible to scripts"

        @check
        def app_list_shows_name_and_version_and_the_page_its_groups():
            expect(page.locator(".app-button", has_text="Scary Bugs")).to_contain_text("1.0 (1)")
            expect(page.locator("#page-title")).to_have_text("Scary Bugs")
            expect(page.locator(".section-title").first).to_have_text("Bugs")
            expect(page.locator(".footer").first).to_have_text("How the list of bugs looks.")

        @check
        def flipping_the_toggle_writes_the_domain_file():
            switch = page.get_by_role("switch", name="Show ratings")
            expect(switch).to_be_checked()
            switch.click()
            wait_for(lambda: h.domain().get("showRatings") is False, what="showRatings = false in the file")
            expect(switch).not_to_be_checked()

        @check
        def moving_the_slider_writes_a_real():
            slider = page.get_by_role("slider", name="thumbnailSize")
            slider.focus()
            page.keyboard.press("End")
            wait_for(lambda: h.domain().get("thumbnailSize") == 128.0, what="thumbnailSize = 128.0")
            assert isinstance(h.domain()["thumbnailSize"], float)

        @check
        def picking_a_multi_value_writes_its_value_and_shows_its_title():
            page.get_by_role("button", name="Sort order").click()
            expect(page.get_by_role("menuitemradio", name="Name")).to_have_attribute("aria-checked", "true")
            page.get_by_role("menuitemradio", name="Scariness").click()
            wait_for(lambda: h.domain().get("sortOrder") == "scariness", what="sortOrder = scariness")
            expect(page.get_by_role("button", name="Sort order")).to_contain_text("Scariness")

        @check
        def a_value_the_schema_refuses_shows_its_reason_and_leaves_the_file():
            before = h.domain_bytes()
            # The slider cannot go past its maximum: the page is changed the way a
            # hostile or stale page would be, and the server must still refuse.
            page.evaluate("""() => { const s = document.querySelector('[data-key="thumbnailSize"]');
                                     s.max = 500; s.value = 500; s.dispatchEvent(new Event('change')); }""")
            reason = page.locator('[data-reason="thumbnailSize"]')
            expect(reason).to_contain_text("SB702")
            expect(reason).to_contain_text("outside the valid range")
            assert h.domain_bytes() == before, "the file changed"
            assert page.locator('[data-key="thumbnailSize"]').input_value() == "128"

        @check
        def defaults_write_in_a_shell_updates_the_open_page_within_a_second():
            switch = page.get_by_role("switch", name="Show ratings")
            expect(switch).not_to_be_checked()
            # Each wait starts once `defaults write` has returned: the second is the page's alone.
            h.run("defaults", "write", APP, "showRatings", "-bool", "true")
            expect(switch).to_be_checked(timeout=1000)
            h.run("defaults", "write", APP, "sortOrder", "date")
            expect(page.get_by_role("button", name="Sort order")).to_contain_text("Date added", timeout=1000)

        @check
        def a_change_event_updates_the_page_in_place_deletes_and_raw_keys_included():
            # The event carries the keys changed (no fetch of the document): a
            # deleted key shows its registered default, a key no row declares
            # comes and goes in the raw view.
            sort = page.get_by_role("button", name="Sort order")
            h.run("defaults", "delete", APP, "sortOrder")
            expect(sort).to_contain_text("Name", timeout=1000)
            h.run("defaults", "write", APP, "liveExtra", "-int", "7")
            expect(page.locator('#raw-table [data-raw-key="liveExtra"]')).to_have_value("7", timeout=1000)
            h.run("defaults", "delete", APP, "liveExtra")
            expect(page.locator('#raw-table [data-raw-row="liveExtra"]')).to_have_count(0, timeout=1000)
            h.run("defaults", "write", APP, "sortOrder", "date")
            expect(sort).to_contain_text("Date added", timeout=1000)

        @check
        def the_managed_key_is_locked_and_cannot_be_changed():
            field = page.locator('[data-key="userName"]')
            expect(field).to_be_disabled()
            expect(field).to_have_value("team@example.com")
            expect(page.locator('[data-row="userName"]')).to_contain_text("Managed by your administrator")
            status = page.evaluate("""async () => (await fetch('/api/apps/com.example.ScaryBugs/values', {method: 'POST',
                                       headers: {'Content-Type': 'application/json'},
                                       body: JSON.stringify({key: 'userName', value: 'me'})})).status""")
            assert status == 409, status
            assert "userName" not in h.domain()

        @check
        def child_pane_opens_and_comes_back_and_its_radio_group_writes():
            page.get_by_role("button", name="Advanced").click()
            expect(page.locator("#page-title")).to_have_text("Advanced")
            page.get_by_role("radio", name="Loud").check()
            wait_for(lambda: h.domain().get("volume") == 3, what="volume = 3")
            page.get_by_role("switch", name="Scary sounds").click()
            wait_for(lambda: h.domain().get("soundEnabled") == "NO", what="soundEnabled = NO (its FalseValue)")
            page.locator("#pane .back").click()
            expect(page.locator("#page-title")).to_have_text("Scary Bugs")

        @check
        def keyboard_alone_reaches_and_operates_every_control_each_with_a_label():
            root_page()
            page.locator("#pane").focus()
            page.evaluate("document.activeElement.blur()")
            seen = []
            for _ in range(40):
                page.keyboard.press("Tab")
                info = page.evaluate("""() => { const e = document.activeElement; if (!e || e === document.body) return null;
                    const label = (e.labels && e.labels.length ? e.labels[0].textContent : '') || e.getAttribute('aria-label')
                                  || e.textContent;
                    return {tag: e.tagName, role: e.getAttribute('role') || e.type || '', key: e.dataset.key || '',
                            label: (label || '').trim(), id: e.id}; }""")
                if info is None:
                    continue
                if seen and info == seen[0]:
                    break
                seen.append(info)
            labels = [s["label"] for s in seen]
            for wanted in ["Show ratings", "thumbnailSize", "Sort order", "Advanced", "Reset to defaults"]:
                assert any(wanted in l for l in labels), f"{wanted} not reached by Tab: {labels}"
            assert all(s["label"] for s in seen), f"a control without a label: {seen}"
            # The managed field is disabled: Tab passes it by.
            assert not any(s["key"] == "userName" for s in seen)
            # Operate with Space and Enter only.
            page.get_by_role("switch", name="Show ratings").focus()
            page.keyboard.press("Space")
            wait_for(lambda: h.domain().get("showRatings") is False, what="Space flips the switch")
            page.get_by_role("button", name="Sort order").focus()
            page.keyboard.press("Enter")
            # The list opens on the checked entry (Date added, written by the shell above).
            expect(page.get_by_role("menuitemradio", name="Date added")).to_be_focused()
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Enter")
            wait_for(lambda: h.domain().get("sortOrder") == "scariness", what="Enter picks Scariness")
            expect(page.get_by_role("button", name="Sort order")).to_be_focused()
            page.get_by_role("button", name="Advanced").focus()
            page.keyboard.press("Enter")
            expect(page.locator("#page-title")).to_have_text("Advanced")
            page.get_by_role("radio", name="Loud").focus()
            page.keyboard.press("ArrowUp")
            wait_for(lambda: h.domain().get("volume") == 2, what="an arrow key moves the radio group")
            page.locator("#pane .back").focus()
            page.keyboard.press("Enter")
            expect(page.locator("#page-title")).to_have_text("Scary Bugs")

        @check
        def raw_view_lists_every_key_typed():
            root_page()
            page.locator("#raw summary").click()
            table = page.locator("#raw-table")
            expect(table).to_contain_text("thumbnailSize")
            expect(table.locator("tr", has_text="thumbnailSize")).to_contain_text("float")
            expect(table.locator("tr", has_text="volume")).to_contain_text("integer")

        @check
        def raw_view_sets_a_key_no_row_declares_keeping_its_type():
            root_page()
            h.run("defaults", "write", APP, "launchCount", "-int", "3")
            field = page.get_by_label("Value of launchCount")
            expect(field).to_have_value("3", timeout=1000)   # live, as the rows
            field.fill("4")
            field.press("Enter")
            wait_for(lambda: h.domain().get("launchCount") == 4, what="launchCount = 4 (an integer)")
            assert type(h.domain()["launchCount"]) is int
            before = h.domain_bytes()
            field.fill("four")
            field.press("Enter")
            expect(page.locator('[data-reason="launchCount"]')).to_contain_text("is not an integer")
            assert h.domain_bytes() == before
            # A key the bundle declares is read-only here: it is changed on its row.
            expect(page.get_by_label("Value of thumbnailSize")).to_have_count(0)
            status = page.evaluate("""async () => (await fetch('/api/apps/com.example.ScaryBugs/raw', {method: 'POST',
                                       headers: {'Content-Type': 'application/json'},
                                       body: JSON.stringify({key: 'thumbnailSize', type: 'float', text: '500'})})).status""")
            assert status == 400, status
            assert h.domain_bytes() == before

        @check
        def reset_to_defaults_asks_first_then_removes_the_declared_keys():
            h.run("defaults", "write", APP, "unrelatedKey", "kept")
            page.get_by_role("button", name="Reset to defaults").click()
            expect(page.locator("#confirm")).to_be_visible()
            page.get_by_role("button", name="Cancel").click()
            assert "showRatings" in h.domain()
            page.get_by_role("button", name="Reset to defaults").click()
            page.locator("#confirm-reset").click()
            wait_for(lambda: set(h.domain().keys()) == {"unrelatedKey", "launchCount"}, what="only the undeclared keys left")
            expect(page.get_by_role("switch", name="Show ratings")).to_be_checked()

        @check
        def french_titles_with_accept_language_fr():
            fr = browser.new_context(locale="fr-FR")
            fp = fr.new_page()
            seen = {}
            fp.on("request", lambda r: seen.setdefault("lang", r.headers.get("accept-language")))
            fp.goto(h.url)
            fp.wait_for_selector("body[data-ready='1']")
            assert seen["lang"].startswith("fr"), seen
            expect(fp.get_by_role("switch", name="Afficher les notes")).to_be_visible()
            expect(fp.locator(".section-title").first).to_have_text("Insectes")
            expect(fp.get_by_role("button", name="Ordre de tri")).to_contain_text("Nom")
            fr.close()

        @check
        def requests_without_the_cookie_or_with_a_foreign_host_or_origin_are_refused():
            good = {"Host": h.hostport, "Cookie": f"apphome_settings={cookie['value']}"}
            before = h.domain_bytes()
            body = '{"key": "showRatings", "value": false}'
            assert h.request("GET", "/api/apps", good)[0] == 200
            status, text = h.request("GET", "/api/apps", {"Host": h.hostport})
            assert status == 403 and "token" in text, (status, text)
            status, _ = h.request("GET", "/api/apps", {**good, "Host": "attacker.example:" + h.hostport.split(":")[1]})
            assert status == 421, status
            status, _ = h.request("GET", "/?token=wrong", {"Host": h.hostport})
            assert status == 403, status
            status, _ = h.request("POST", f"/api/apps/{APP}/values", {**good, "Origin": "http://attacker.example"}, body)
            assert status == 403, status
            status, _ = h.request("POST", f"/api/apps/{APP}/values", good, body)
            assert status == 403, status   # no Origin at all
            status, _ = h.request("POST", f"/api/apps/{APP}/values", {"Host": h.hostport, "Origin": h.base}, body)
            assert status == 403, status   # no cookie
            status, _ = h.request("POST", f"/api/apps/{APP}/values", {**good, "Origin": h.base}, "x" * 100_000)
            assert status == 413, status
            assert h.domain_bytes() == before, "a refused request changed the file"
            # The page's security headers.
            conn = http.client.HTTPConnection(h.hostport, timeout=5)
            conn.request("GET", "/", headers=good)
            r = conn.getresponse()
            r.read()
            csp = r.getheader("Content-Security-Policy")
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp, csp
            conn.close()

        @check
        def a_client_in_an_apps_context_is_refused():
            # curl started as `apphome run` starts an app's programs: the server finds
            # its process from the connection (/proc/net/tcp) and reads its environment.
            env = {**os.environ, "APPHOME_BUNDLE_ID": APP}
            r = subprocess.run(["curl", "-s", "-w", "%{http_code}", h.base + "/api/apps"],
                               env=env, capture_output=True, text=True, timeout=30)
            assert r.stdout.endswith("403") and f"runs in the context of the app {APP}" in r.stdout, (r.returncode, r.stdout)
            r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", h.base + "/api/apps"],
                               capture_output=True, text=True, timeout=30)
            assert r.stdout == "403", r.stdout   # the same request outside an app: served (no cookie, so 403)

        @check
        def idle_connections_cannot_lock_the_page_out():
            # 80 connections that never finish their request: the server keeps 64
            # and closes the oldest to make room; the page still loads and works.
            import socket
            host, port = h.hostport.rsplit(":", 1)
            idle = []
            for _ in range(80):
                s = socket.create_connection((host, int(port)), timeout=5)
                s.sendall(b"GET /api/apps HTTP/1.1\r\nHost: " + h.hostport.encode() + b"\r\n")
                idle.append(s)
            page.reload()
            page.wait_for_selector("body[data-ready='1']")
            page.get_by_role("switch", name="Show ratings").click()
            wait_for(lambda: h.domain().get("showRatings") is False, what="a change with 80 idle connections open")
            closed = 0
            for s in idle:
                s.settimeout(0.2)
                try:
                    closed += s.recv(1) == b""
                except (TimeoutError, socket.timeout):
                    pass
                except ConnectionResetError:
                    closed += 1
                s.close()
            assert closed >= 16, f"only {closed} of 80 idle connections were closed"

        @check
        def a_change_goes_on_the_pages_websocket_not_a_post():
            expect(page.locator("body")).to_have_attribute("data-socket", "1")
            posts = []
            listener = lambda r: posts.append(r.url) if r.method == "POST" else None
            page.on("request", listener)
            try:
                was = h.domain().get("showRatings", True)
                page.get_by_role("switch", name="Show ratings").click()
                wait_for(lambda: h.domain().get("showRatings") is (not was), what="showRatings flipped through the socket")
                expect(page.locator("#status")).to_have_text("Saved")
            finally:
                page.remove_listener("request", listener)
            assert posts == [], posts

        @check
        def a_change_whose_websocket_closes_before_its_answer_is_made_by_post():
            # Playwright stands between the page and the server's socket and
            # closes it as soon as the change is sent on it (as a proxy or a
            # restarting server would): the page sends the change again as a POST.
            ctx = browser.new_context()
            got = []

            def route(ws):
                ws.on_message(lambda message: (got.append(message), ws.close()))
            ctx.route_web_socket(re.compile(r".*/api/socket$"), route)
            other = ctx.new_page()
            posts = []
            other.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
            try:
                other.goto(h.url)
                other.wait_for_selector("body[data-ready='1']")
                expect(other.locator("body")).to_have_attribute("data-socket", "1")
                was = h.domain().get("showRatings", True)
                other.get_by_role("switch", name="Show ratings").click()
                wait_for(lambda: h.domain().get("showRatings") is (not was), what="showRatings flipped by the POST")
                expect(other.locator("#status")).to_have_text("Saved")
                assert len(got) == 1 and json.loads(got[0])["key"] == "showRatings", got
                assert posts == [f"{h.base}/api/apps/{APP}/values"], posts
            finally:
                ctx.close()

        @check
        def the_websocket_needs_the_cookie_the_host_and_the_origin_and_refuses_as_the_post_does():
            import base64
            import socket
            host, port = h.hostport.rsplit(":", 1)

            def handshake(headers):
                s = socket.create_connection((host, int(port)), timeout=5)
                lines = ["GET /api/socket HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade",
                         "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version: 13"]
                lines += [f"{k}: {v}" for k, v in headers.items()]
                s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    head += chunk
                return s, int(head.split(b" ", 2)[1]), head.split(b"\r\n\r\n", 1)[-1]

            good = {"Host": h.hostport, "Cookie": f"apphome_settings={cookie['value']}", "Origin": h.base}
            before = h.domain_bytes()
            for headers, wanted in [({**good, "Origin": "http://attacker.example"}, 403), ({**good, "Cookie": "apphome_settings=x"}, 403),
                                    ({**good, "Host": "attacker.example:" + port}, 421),
                                    ({k: v for k, v in good.items() if k != "Origin"}, 403)]:
                s, status, _ = handshake(headers)
                s.close()
                assert status == wanted, (headers, status)
            s, status, data = handshake(good)
            try:
                assert status == 101, status
                # A client's frame is masked; the managed key is refused as the POST refuses it.
                payload = json.dumps({"id": 5, "app": APP, "key": "userName", "value": "me"}).encode()
                mask = os.urandom(4)
                s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                while len(data) < 2 or len(data) < 2 + (data[1] & 0x7F):
                    data += s.recv(4096)
                answer = json.loads(data[2:2 + (data[1] & 0x7F)])
                assert answer == {"id": 5, "status": 409, "error": "Managed by your administrator"}, answer
            finally:
                s.close()
            assert h.domain_bytes() == before, "a refused change changed the file"

        @check
        def screenshots_light_and_dark():
            if not options.screenshots:
                return
            os.makedirs(options.screenshots, exist_ok=True)
            h.run("defaults", "write", APP, "showRatings", "-bool", "true")
            h.run("defaults", "write", APP, "sortOrder", "scariness")
            page.reload()
            page.wait_for_selector("body[data-ready='1']")
            expect(page.get_by_role("button", name="Sort order")).to_contain_text("Scariness")
            page.locator("#pane").focus()
            page.set_viewport_size({"width": 1000, "height": 600})
            for scheme in ["light", "dark"]:
                # No transition half-way: the same pixels every run.
                page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
                page.wait_for_timeout(100)
                page.screenshot(path=os.path.join(options.screenshots, f"settings-app-{scheme}.png"))
            page.emulate_media(color_scheme="light")

        for fn in checks:
            try:
                fn()
                print(f"ok   {fn.__name__}")
            except Exception:
                failures.append(fn.__name__)
                print(f"FAIL {fn.__name__}\n{traceback.format_exc()}")
        browser.close()

    try:
        status = h.stop()
        if status != 0:
            failures.append("sigterm_exits_0")
            print(f"FAIL sigterm_exits_0: status {status}; stderr: {h.server.stderr.read()}")
        else:
            print("ok   sigterm_exits_0")
    finally:
        shutil.rmtree(h.work, ignore_errors=True)
    print(f"{len(checks) + 1 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
