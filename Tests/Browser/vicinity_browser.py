"""What the browser tests of the map page share: the shipped data, a small client of the HTTP API for setting
people up, the mail the server sent (codes read from the relay's folder), and `Browser`, one headless Chromium
session driven through chromedriver with the page's element ids.

Settings, from the environment:
    VICINITY_BROWSER_URL        the server under test (default http://127.0.0.1:18085)
    VICINITY_BROWSER_MAIL_DIR   the folder where the server's mail relay writes each message it takes as N.json
                                (Tests/MailTestSupport/smtp_server.py); with it every test person
                                has an e-mail address, confirmed with the code mailed to it; without it (a server
                                with no relay) nobody has one and the tests of accounts skip
    VICINITY_BROWSER_WAIT       seconds any wait for the page gives up after (default 20); the two-second pin
                                check keeps its own bound
    VICINITY_BROWSER_ARTIFACTS  folder for each session's last screenshot and HTML (default
                                /tmp/vicinity-browser-artifacts)
    VICINITY_BROWSER_SCREENSHOTS  where the screenshot test writes map-1280x800.png and map-375x812.png
                                (default docs/screenshots)
    CHROMIUM, CHROMEDRIVER      the binaries (default /usr/bin/chromium, /usr/bin/chromedriver)
"""

import csv
import json
import os
import pathlib
import random
import re
import socket
import string
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import (ElementClickInterceptedException, ElementNotInteractableException,
                                        NoSuchElementException, StaleElementReferenceException, TimeoutException,
                                        WebDriverException)
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.remote_connection import RemoteConnection
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVER = os.environ.get("VICINITY_BROWSER_URL", "http://127.0.0.1:18085").rstrip("/")
WAIT = float(os.environ.get("VICINITY_BROWSER_WAIT", "20"))
ARTIFACTS = pathlib.Path(os.environ.get("VICINITY_BROWSER_ARTIFACTS", "/tmp/vicinity-browser-artifacts"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
MAIL_DIR = os.environ.get("VICINITY_BROWSER_MAIL_DIR")
# Where test people's mail goes: the relay takes mail for any address.
MAIL_DOMAIN = "example.edu"

# No chromedriver command may hang a test: an answer that takes longer than this is an error.
RemoteConnection.set_timeout(max(120, 4 * WAIT))

# The two sizes the page is checked at: a 1280x800 desktop and a 375x812 phone (width, height, mobile).
SIZES = ((1280, 800, False), (375, 812, True))


def size_name(width, height):
    return f"{width}x{height}"


# One tag per run, so that the usernames of this run are new on a server that has seen earlier runs.
RUN = "".join(random.choices(string.ascii_lowercase + string.digits, k=6))
_usernames = 0

# Every session's browser log and page probe, kept when the session ends, for the test that reads them all.
BROWSER_LOG = []


def _rows(file_name):
    with open(ROOT / "Data" / file_name, newline="", encoding="utf-8") as data:
        return {row["id"]: row for row in csv.DictReader(data)}


class PageDidNot(AssertionError):
    """A wait for the page ran out: a test failure, not an error."""


class Place:
    def __init__(self, row):
        self.id, self.name = row["id"], row["name"]
        self.lat, self.lon = float(row["lat"]), float(row["lon"])
        self.lat_text, self.lon_text = row["lat"], row["lon"]

    def __repr__(self):
        return f"{self.name} ({self.lat_text}, {self.lon_text})"


def building(place_id):
    """A CSULB building as Data/csulb-buildings.csv has it: coordinates are never typed into the tests."""
    return Place(_rows("csulb-buildings.csv")[place_id])


def temple_named(name):
    """The Bangkok temple whose name is exactly `name` in Data/bangkok-temples.csv."""
    matches = [row for row in _rows("bangkok-temples.csv").values() if row["name"] == name]
    assert len(matches) == 1, f"{name!r} names {len(matches)} rows of Data/bangkok-temples.csv"
    return Place(matches[0])


# The HTTP API, for setting people up quickly where the page itself is not what a test is about.

def require_server():
    """A test module's first step: stops it at once, saying what to do, when no server answers at SERVER."""
    try:
        api("GET", "/health")
    except (ApiError, OSError) as error:
        raise RuntimeError(f"no Vicinity server answers at {SERVER} (VICINITY_BROWSER_URL): {error}") from None


class Measurements:
    """The figures a test module measures: each printed as it comes, and all of them again at the module's end,
    so that they stand together at the foot of the run's output."""

    def __init__(self):
        self.lines = []

    def __call__(self, line):
        self.lines.append(line)
        print(f"\n    {line}", file=sys.stderr, flush=True)

    def report(self):
        if self.lines:
            print("\n" + "\n".join(self.lines), file=sys.stderr, flush=True)


class ApiError(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def api(method, path, token=None, body=None, raw=False):
    request = urllib.request.Request(SERVER + path, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, data, timeout=WAIT) as answer:
            content = answer.read()
            if raw:
                return answer.status, answer.headers, content
            return json.loads(content) if content else None
    except urllib.error.HTTPError as error:
        raise ApiError(f"{method} {path}: {error.code} {error.read().decode(errors='replace')}", error.code) from None


def query(**parameters):
    return urllib.parse.urlencode(parameters)


# The mail the server sent, as the relay wrote it: N.json per message, numbered as they arrived.

def mail_to(address):
    """Every message the relay took for `address` (ignoring case), oldest first."""
    assert MAIL_DIR, "no mail folder: VICINITY_BROWSER_MAIL_DIR is not set"
    found = []
    for path in pathlib.Path(MAIL_DIR).glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        if address.lower() in (recipient.lower() for recipient in record["rcpt_tos"]):
            found.append((int(path.stem), record))
    return [record for _, record in sorted(found, key=lambda pair: pair[0])]


def mail_count(address):
    return len(mail_to(address)) if MAIL_DIR else 0


def mailed(address, after):
    """The first message to `address` past the `after` it already had, once it arrives (waits at most WAIT s)."""
    def arrived(_):
        messages = mail_to(address)
        return messages[after] if len(messages) > after else None
    try:
        return WebDriverWait(None, WAIT, poll_frequency=0.1).until(arrived)
    except TimeoutException:
        raise PageDidNot(f"no mail reached {address} within {WAIT:g} s (it had {after} before)") from None


def code_mailed(address, after):
    """The six-digit code of the first message to `address` past the `after` it already had: the mail's subject
    ends with it and its text starts with it."""
    message = mailed(address, after)
    found = re.search(r"\b(\d{6})$", message["subject"] or "")
    assert found, f"no code in the subject of the mail to {address}: {message['subject']!r}"
    assert message["body"].startswith(found.group(1)), f"the mail to {address} does not start with its code"
    return found.group(1)


def closest_label(place):
    """What the service calls where `place` is ("Around Hall of Science"), for comparing with the page."""
    return api("GET", f"/v1/places/closest?{query(lat=place.lat_text, lon=place.lon_text)}")["label"]


class Account:
    def __init__(self, first_name, last_name, prefix):
        global _usernames
        _usernames += 1
        self.username = f"{prefix}-{RUN}-{_usernames}"
        self.password = f"browser check {RUN} password"
        self.first_name, self.last_name = first_name, last_name
        # As a server with a relay asks of everyone by default (serve --require-email).
        self.email = f"{self.username}@{MAIL_DOMAIN}" if MAIL_DIR else None
        self.id = self.token = None

    @property
    def full_name(self):
        return f"{self.first_name} {self.last_name}"

    def sign_up_through_api(self):
        """Signs up and in, and confirms the e-mail address with the code mailed to it, if there is one."""
        body = {"username": self.username, "password": self.password,
                "first_name": self.first_name, "last_name": self.last_name}
        if self.email:
            body["email"] = self.email
        before = mail_count(self.email) if self.email else 0
        self.id = api("POST", "/v1/users", body=body)["id"]
        self.token = api("POST", "/v1/sessions",
                         body={"username": self.username, "password": self.password})["token"]
        if self.email:
            api("POST", "/v1/me/email-verification/confirm", self.token, {"code": code_mailed(self.email, before)})
        return self

    def befriend_through_api(self, other):
        request = api("POST", "/v1/friend-requests", self.token, {"to": other.id})["id"]
        api("POST", f"/v1/friend-requests/{request}/accept", other.token)

    def share_through_api(self, place, status=None):
        api("PUT", "/v1/me/position", self.token, {"lat": place.lat, "lon": place.lon, "status": status})


class Relay:
    """A TCP relay on a loopback port of its own that passes every connection on to the server under test, and
    can be cut: `cut()` drops every connection and refuses new ones, as a server that stopped does; `restore()`
    takes connections again on the same port, as the server back. A page opened through `url` sees an outage of
    the server; the server and every other page see nothing."""

    def __init__(self):
        parsed = urllib.parse.urlparse(SERVER)
        self.upstream = (parsed.hostname, parsed.port or 80)
        self.port = None
        self.listener = None
        self.open = set()
        self.lock = threading.Lock()
        self.restore()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def restore(self):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port or 0))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self):
        # Shut down first: closing alone would leave the thread blocked in accept() taking connections.
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            cut, self.open = self.open, set()
        for connection in cut:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()

    def close(self):
        self.cut()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=WAIT)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        # Either side's end ends both: a browser whose server went away sees its connection close.
        for connection in (source, sink):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()
        with self.lock:
            self.open -= {source, sink}


# The probe runs in every document before the page's own scripts (CDP, so the page's CSP does not apply to
# it): it counts dialogs, script errors, CSP violations and failed loads, and lets the resource timing buffer
# hold every request of a long flow.
PROBE = r"""
(() => {
  const probe = window.__vicinityProbe = {dialogs: [], errors: [], csp: [], failedLoads: []};
  for (const name of ['alert', 'confirm', 'prompt']) {
    const original = window[name];
    window[name] = function (...parts) { probe.dialogs.push(name + '(' + String(parts[0]) + ')'); return original.apply(this, parts); };
  }
  window.addEventListener('error', event => {
    const target = event.target;
    if (target && target !== window && target.tagName) {
      probe.failedLoads.push(target.tagName.toLowerCase() + ' ' + (target.currentSrc || target.src || target.href || ''));
    } else {
      probe.errors.push(String(event.message) + ' at ' + event.filename + ':' + event.lineno);
    }
  }, true);
  window.addEventListener('unhandledrejection', event => {
    const reason = event.reason;
    probe.errors.push('unhandled rejection: ' + (reason && reason.stack ? reason.stack : String(reason)));
  });
  document.addEventListener('securitypolicyviolation', event => {
    probe.csp.push(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' + event.sourceFile + ':' + event.lineNumber);
  }, true);
  try { performance.setResourceTimingBufferSize(100000); } catch (error) {}
})();
"""


def _is_problem(entry):
    message, level, source = entry.get("message", ""), entry.get("level"), entry.get("source", "")
    if "Content Security Policy" in message or "Content-Security-Policy" in message:
        return True
    if level != "SEVERE":
        return False
    if source in ("javascript", "console-api", "security") or "Uncaught" in message:
        return True
    if source == "network":
        # A page file or Leaflet file that failed to load; API answers (4xx on purpose) and the favicon are not.
        url = message.split(" ", 1)[0]
        path = urllib.parse.urlparse(url).path
        return url.startswith(SERVER) and not path.startswith("/v1/") and path != "/favicon.ico"
    return False


class Browser:
    """One headless Chromium with a viewport of exactly width x height CSS pixels."""

    def __init__(self, test, width=1280, height=800, mobile=False, downloads=None):
        """`downloads`: a folder where Chromium saves what the page downloads, without asking."""
        self.test_name = test.id().rsplit(".", 1)[-1]
        options = Options()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                         "--disable-extensions", "--lang=en-US", "--force-device-scale-factor=1",
                         f"--window-size={max(width, 1280)},{max(height, 900)}"):
            options.add_argument(argument)
        if os.geteuid() == 0:
            options.add_argument("--no-sandbox")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # An alert stays open for the test to see, rather than being dismissed by the next command.
        options.set_capability("unhandledPromptBehavior", "ignore")
        if downloads:
            options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                                      "download.prompt_for_download": False})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            self.driver.set_page_load_timeout(max(30, 2 * WAIT))
            self.driver.set_script_timeout(WAIT)
            if downloads:
                # Headless Chromium saves downloads only where it is told to, whatever the preferences say.
                self.driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
            self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
            self.set_viewport(width, height, mobile)
        except BaseException:
            self.driver.quit()
            raise
        self.closed = False

    # Sessions

    def set_viewport(self, width, height, mobile=False):
        self.width, self.height = width, height
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def close(self):
        """Keeps the session's log and probe for the log test, a last screenshot and the HTML, then quits."""
        if self.closed:
            return
        self.closed = True
        try:
            entries = self.driver.get_log("browser")
            probe = self.js("return window.__vicinityProbe || null") or {}
            BROWSER_LOG.append({"test": self.test_name, "entries": entries, "probe": probe,
                                "problems": [entry for entry in entries if _is_problem(entry)]})
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            stem = ARTIFACTS / f"{self.test_name}-{id(self) % 100000}"
            self.driver.save_screenshot(str(stem) + ".png")
            stem.with_suffix(".html").write_text(self.driver.page_source, encoding="utf-8")
        except WebDriverException:
            pass
        finally:
            self.driver.quit()

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    # Waiting and finding

    def wait(self, condition, message, timeout=None):
        """Waits until condition(driver) is truthy (errors while the page changes count as not yet); else fails
        with `message` (a function is called then, so that it can say what the page shows at that time)."""
        timeout = timeout or WAIT
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1,
                                 ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(condition)
        except TimeoutException:
            try:
                said = message() if callable(message) else message
            except WebDriverException as error:
                said = f"{message} ({error.__class__.__name__})"
            raise PageDidNot(f"not so within {timeout:g} s: {said}") from None

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def visible(self, css, message=None):
        return self.wait(lambda driver: (element := self.find(css)).is_displayed() and element,
                         message or f"{css} is shown")

    def text(self, element_or_css):
        element = self.find(element_or_css) if isinstance(element_or_css, str) else element_or_css
        return (element.get_attribute("textContent") or "").strip()

    def click(self, element_or_css):
        """A real click (scrolled into view first); retried while something transient covers the element."""
        def attempt(driver):
            element = self.find(element_or_css) if isinstance(element_or_css, str) else element_or_css
            self.js("arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})", element)
            try:
                element.click()
                return True
            except (ElementClickInterceptedException, ElementNotInteractableException):
                return False
        self.wait(attempt, f"{element_or_css if isinstance(element_or_css, str) else 'the element'} can be clicked")

    def fill(self, css, value):
        element = self.visible(css)
        element.clear()
        element.send_keys(value)

    def submit(self, form_css):
        self.click(self.visible(f"{form_css} [type=submit], {form_css} button:not([type])"))

    def select(self, css, value):
        select = Select(self.visible(css))
        try:
            select.select_by_value(value)
        except NoSuchElementException:
            select.select_by_visible_text(value)

    def message(self):
        return self.text("#message") if self.find_all("#message") else ""

    def text_of(self, css):
        """The text of `css`, or None when nothing matches (for messages)."""
        return self.text(css) if self.find_all(css) else None

    # The page

    def open(self, path="/", server=SERVER):
        """Opens `path` of the server (or of another address for it: a Relay's)."""
        self.driver.get(server + path)
        self.wait(lambda driver: self.js("return document.readyState") == "complete", "the page loads")
        self.visible("#tab-places", "the page shows its tabs")
        self.js("window.__vicinityNotReloaded = true")

    def assert_not_reloaded(self):
        assert self.js("return window.__vicinityNotReloaded === true"), "the page was reloaded"

    def tab(self, name):
        self.click(f"#tab-{name}")
        self.wait(lambda driver: self.find(f"#panel-{name}").is_displayed(), f"#panel-{name} opens")

    def sign_up(self, account, confirm=True):
        """Signs up through the page, with the account's e-mail address if it has one; with `confirm`, types the
        code mailed to it into the code step. Returns how many mails the address had before."""
        self.tab("account")
        self.fill("#signup-username", account.username)
        if account.email:
            self.fill("#signup-email", account.email)
        self.fill("#signup-password", account.password)
        self.fill("#signup-first-name", account.first_name)
        self.fill("#signup-last-name", account.last_name)
        before = mail_count(account.email) if account.email else 0
        self.submit("#signup-form")
        self.wait_signed_in(account)
        if account.email and confirm:
            self.confirm_email(account.email, before)
        return before

    def confirm_email(self, address, before):
        """Types the code mailed to `address` (past the `before` mails it had) into the code step, and waits for
        the page to show the address confirmed."""
        self.visible("#email-confirm-form", "the code step shows")
        self.fill("#email-code", code_mailed(address, before))
        self.submit("#email-confirm-form")
        self.wait(lambda driver: self.text("#email-current .email-address") == address
                  and not self.find("#email-confirm-form").is_displayed(),
                  lambda: f"#email-current shows {address} confirmed (it says {self.text('#email-current')!r}, "
                          f"the form {self.text('#email-confirm-form')!r})")

    def sign_in(self, account, login=None, password=None):
        """Signs in with the username (or `login`, an address) and the password."""
        self.tab("account")
        self.fill("#signin-login", login or account.username)
        self.fill("#signin-password", password or account.password)
        self.submit("#signin-form")
        self.wait_signed_in(account)

    def wait_signed_in(self, account):
        self.wait(lambda driver: f"@{account.username}" in self.text("#whoami") and self.find("#whoami").is_displayed(),
                  lambda: f"#whoami names @{account.username} (#message says {self.message()!r})")

    def set_point(self, place):
        """Makes `place` the current point through the manual form; waits for #point-info to name it."""
        label = closest_label(place)
        self.tab("places")
        self.fill("#point-lat", place.lat_text)
        self.fill("#point-lon", place.lon_text)
        self.submit("#point-form")
        self.wait(lambda driver: label in self.text("#point-info"),
                  lambda: f"#point-info says {label!r} for {place} (it says {self.text('#point-info')!r}, "
                          f"#message {self.message()!r})")
        return label

    def share(self, status=""):
        """Shares the current point with `status` (#share-position); waits for the PUT's answer and returns
        when it arrived, in ms since the epoch (the browser's clock), taken from resource timing."""
        self.tab("account")
        self.fill("#position-status", status)
        # The message is emptied first, so that the wait below sees this share's message, not an earlier one.
        before = self.js("const message = document.getElementById('message');"
                         "if (message) message.textContent = ''; return performance.now()")
        self.click("#share-position")
        entry = self.wait(lambda driver: self.js("""
            const [after] = arguments;
            const done = performance.getEntriesByType('resource').filter(entry =>
                new URL(entry.name).pathname === '/v1/me/position' && entry.startTime >= after && entry.responseEnd > 0);
            return done.length ? {at: performance.timeOrigin + done[done.length - 1].responseEnd,
                                  status: done[done.length - 1].responseStatus} : null;""", before),
            "the page sends PUT /v1/me/position and has its answer")
        assert entry["status"] in (None, 0, 200, 201), f"PUT /v1/me/position answered {entry['status']}: {self.message()!r}"
        self.wait(lambda driver: self.message() != "", "#message says the position was shared")
        return entry["at"]

    def friend_item(self, account):
        return f'#friends-list li[data-user-id="{account.id}"]'

    def pin(self, kind, element_id):
        return f'#map [data-kind="{kind}"][data-id="{element_id}"]'

    def pin_at(self, kind, element_id, place):
        """Whether a pin of that kind and id shows at `place` (data-lat/data-lon within a micro-degree)."""
        for element in self.find_all(self.pin(kind, element_id)):
            try:
                if (abs(float(element.get_attribute("data-lat")) - place.lat) < 1e-6
                        and abs(float(element.get_attribute("data-lon")) - place.lon) < 1e-6):
                    return True
            except (TypeError, ValueError):
                pass
        return False

    def pin_coordinates(self, kind, element_id):
        return [(element.get_attribute("data-lat"), element.get_attribute("data-lon"))
                for element in self.find_all(self.pin(kind, element_id))]

    def watch_pin(self, kind, element_id, place):
        """Starts watching the map: window.__vicinityPinAt becomes Date.now() at the DOM change that puts the
        pin at `place` (a MutationObserver, so Selenium's polling adds nothing to the time measured)."""
        self.js("""
            const [kind, id, lat, lon] = arguments;
            window.__vicinityPinAt = null;
            const there = () => [...document.querySelectorAll('#map [data-kind="' + kind + '"]')].some(element =>
                element.getAttribute('data-id') === id &&
                Math.abs(parseFloat(element.getAttribute('data-lat')) - lat) < 1e-6 &&
                Math.abs(parseFloat(element.getAttribute('data-lon')) - lon) < 1e-6);
            if (there()) { window.__vicinityPinAt = Date.now(); return; }
            const observer = new MutationObserver(() => {
                if (window.__vicinityPinAt === null && there()) { window.__vicinityPinAt = Date.now(); observer.disconnect(); }
            });
            observer.observe(document.getElementById('map'), {subtree: true, childList: true, attributes: true});
        """, kind, element_id, place.lat, place.lon)

    def watch_pin_presence(self, kind, element_id, present):
        """Starts watching the map: window.__vicinityPinChangedAt becomes Date.now() at the DOM change after
        which a pin of that kind and id is there (`present`) or gone (a MutationObserver, as `watch_pin`)."""
        self.js("""
            const [kind, id, present] = arguments;
            window.__vicinityPinChangedAt = null;
            const shown = () => [...document.querySelectorAll('#map [data-kind="' + kind + '"]')]
                .some(element => element.getAttribute('data-id') === id);
            if (shown() === present) { window.__vicinityPinChangedAt = Date.now(); return; }
            const observer = new MutationObserver(() => {
                if (window.__vicinityPinChangedAt === null && shown() === present) {
                    window.__vicinityPinChangedAt = Date.now();
                    observer.disconnect();
                }
            });
            observer.observe(document.getElementById('map'), {subtree: true, childList: true, attributes: true});
        """, kind, element_id, present)

    def images_outside_leaflet(self, css):
        """The img elements under `css` that are neither Leaflet's own marker images nor map tiles."""
        return self.js("""
            return [...document.querySelectorAll(arguments[0] + ' img')]
                .filter(image => !image.classList.contains('leaflet-tile') &&
                                 !new URL(image.getAttribute('src') || '', location.href).pathname.startsWith('/leaflet/'))
                .map(image => image.outerHTML);""", css)

    def open_dialog(self):
        try:
            return self.driver.switch_to.alert.text
        except WebDriverException:
            return None


def distance_in_metres(text):
    """'420 m', '1.2 km', '1,204 m' as metres; None when the text is no distance."""
    found = re.search(r"(\d[\d,]*(?:\.\d+)?)\s*(km|m)\b", text)
    if not found:
        return None
    value = float(found.group(1).replace(",", ""))
    return value * 1000 if found.group(2) == "km" else value


def png_size(path):
    with open(path, "rb") as image:
        header = image.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
