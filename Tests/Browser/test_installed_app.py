"""The page as an installable web app that receives push notifications, in a real browser: it registers its service
worker for the whole page, links a manifest Chromium reads without errors, and "Notify me on this device" says in
the page's words why it cannot be turned on in headless Chromium (which has no push service), or on a server that
sends no notifications, and stays off. The worker's own handlers are run in the page with the browser's parts
stubbed, so that what a push message shows and where a click on it goes are checked without a push service.
Scripts/check/browser.sh runs these with the other browser tests; their sessions are checked for CSP violations and
script errors by the last test of test_map_page.py, which runs after these (discover takes the files in the order of
their names).
"""

import json
import unittest
import urllib.error
import urllib.request

from vicinity_browser import SERVER, WAIT, Account, ApiError, Browser, api, require_server

UNSUPPORTED = "This browser cannot receive notifications."
NO_SERVER = "This server does not send notifications."
BLOCKED = "Notifications are blocked for this site in the browser's settings."
NO_PUSH_SERVICE = "This browser has no push service available right now."


# A push service for PushManager in the page: subscribe() answers at once with a subscription whose keys are of
# the right form (a P-256 point and 16 bytes), to an endpoint of a real push service that is never sent to.
FAKE_PUSH_SERVICE = r"""
(() => {
  const KEPT = 'test.fakeSubscription';
  const made = (json, key) => ({
    endpoint: json.endpoint, expirationTime: null, options: {userVisibleOnly: true, applicationServerKey: key},
    toJSON: () => json,
    unsubscribe: async () => { localStorage.removeItem(KEPT); return true; },
  });
  PushManager.prototype.subscribe = async function (options) {
    const key = new Uint8Array(options.applicationServerKey).buffer;
    const json = {endpoint: 'https://fcm.googleapis.com/fcm/send/browser-check-' + Date.now(), expirationTime: null,
      keys: {p256dh: 'BETdiNaD73s6kXHHtHTcIpaHCbQR6Uk71SdGY8KKdYWqQ8Ui6ILOAUAMAQs4nbhDct_cL34ZudFB65a-R9tVuaw',
             auth: 'q0YQ1v4m5GdUrT0e3nq1sQ'}};
    localStorage.setItem(KEPT, JSON.stringify({json, key: [...new Uint8Array(key)]}));
    return made(json, key);
  };
  PushManager.prototype.getSubscription = async function () {
    const kept = JSON.parse(localStorage.getItem(KEPT) || 'null');
    return kept ? made(kept.json, new Uint8Array(kept.key).buffer) : null;
  };
})();
"""


def setUpModule():
    require_server()


def server_sends_notifications():
    """Whether GET /v1/push/vapid-public-key gives a key (True) or is 404 (False, a server without
    `serve --vapid-key`); any other answer fails the test that asks."""
    try:
        with urllib.request.urlopen(SERVER + "/v1/push/vapid-public-key", timeout=WAIT) as answer:
            key = json.loads(answer.read())["key"]
            assert isinstance(key, str) and key, f"the key endpoint answered {answer.status} without a key"
            return True
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise AssertionError(f"GET /v1/push/vapid-public-key answered {error.code}, neither a key nor 404") from None


def headers_of(path):
    with urllib.request.urlopen(SERVER + path, timeout=WAIT) as answer:
        return answer.status, answer.headers


class InstalledAppTest(unittest.TestCase):
    maxDiff = None

    def browser(self):
        browser = Browser(self, 1280, 800)
        self.addCleanup(browser.close)
        return browser

    def signed_in_at_the_switch(self, permission=None):
        """A new student signed in on the page with the Account panel open; `permission` ('granted' or 'denied')
        is set for notifications on the server's origin first, as the browser's site settings would."""
        student = Account("Nok", "Boonmee", "nok").sign_up_through_api()
        browser = self.browser()
        if permission:
            browser.driver.execute_cdp_cmd("Browser.setPermission", {
                "permission": {"name": "notifications"}, "setting": permission, "origin": SERVER})
        browser.open()
        browser.sign_in(student)
        browser.tab("account")
        browser.visible("#push-switch", "the switch shows")
        return student, browser

    def turn_on(self, browser):
        """Turns the switch on and waits for the page to say something and leave the switch usable again."""
        browser.click("label[for='push-switch']")
        browser.wait(lambda driver: browser.text("#push-state") != "" and browser.find("#push-switch").is_enabled(),
                     lambda: f"#push-state says what happened (it says {browser.text('#push-state')!r})")
        return browser.text("#push-state")

    def test_the_page_registers_its_service_worker_for_the_whole_page(self):
        status, headers = headers_of("/sw.js")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/javascript; charset=utf-8")
        self.assertEqual(headers["Cache-Control"], "no-cache")
        self.assertIn("worker-src 'self'", headers["Content-Security-Policy"])

        browser = self.browser()
        browser.open()
        registration = browser.wait(lambda driver: driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            navigator.serviceWorker.getRegistration().then(registration => {
                const worker = registration && (registration.active || registration.installing || registration.waiting);
                done(worker ? {scope: registration.scope, script: worker.scriptURL,
                               active: Boolean(registration.active), installing: Boolean(registration.installing)} : null);
            }, error => done(null));"""), "the page registers a service worker")
        self.assertEqual(registration["scope"], SERVER + "/")
        self.assertEqual(registration["script"], SERVER + "/sw.js")
        self.assertTrue(registration["active"] or registration["installing"], registration)
        # It becomes the page's worker: active, and (it claims its clients) in control of the page.
        browser.wait(lambda driver: browser.js("return Boolean(navigator.serviceWorker.controller)"),
                     "the worker controls the page")

    def test_the_manifest_is_linked_parses_and_makes_the_page_installable(self):
        browser = self.browser()
        browser.open()
        self.assertEqual(browser.find("link[rel='manifest']").get_attribute("href"), SERVER + "/manifest.webmanifest")
        status, headers = headers_of("/manifest.webmanifest")
        self.assertEqual((status, headers["Content-Type"]), (200, "application/manifest+json"))

        # As Chromium read it, with the errors it found.
        read = browser.driver.execute_cdp_cmd("Page.getAppManifest", {})
        self.assertEqual(read["url"], SERVER + "/manifest.webmanifest")
        self.assertEqual(read["errors"], [])
        manifest = json.loads(read["data"])
        self.assertEqual(manifest["name"], "Vicinity")
        self.assertEqual((manifest["start_url"], manifest["scope"], manifest["display"]), ("/", "/", "standalone"))
        self.assertEqual(manifest["theme_color"], browser.find("meta[name='theme-color']").get_attribute("content"))
        sizes = {icon["sizes"] for icon in manifest["icons"]}
        self.assertLessEqual({"192x192", "512x512", "any"}, sizes)
        for icon in manifest["icons"]:
            status, headers = headers_of(icon["src"])
            self.assertEqual((status, headers["Content-Type"]), (200, icon["type"]), icon["src"])

        # Installable: once the worker is active, Chromium finds nothing in the way.
        browser.wait(lambda driver: browser.js("return Boolean(navigator.serviceWorker.controller)"),
                     "the worker controls the page")
        browser.wait(lambda driver: driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"] == [],
                     lambda: f"Chromium finds the page installable (it says "
                             f"{browser.driver.execute_cdp_cmd('Page.getInstallabilityErrors', {})})")

    def test_turning_notifications_on_without_a_push_service_says_why_and_leaves_the_switch_off(self):
        student, browser = self.signed_in_at_the_switch(permission="granted")
        self.assertFalse(browser.find("#push-switch").is_selected(), "the switch starts off: nothing is subscribed")
        sends = server_sends_notifications()
        said = self.turn_on(browser)
        # Headless Chromium has no push service; a server without a VAPID key is told before the browser is asked.
        self.assertEqual(said, NO_PUSH_SERVICE if sends else NO_SERVER)
        self.assertFalse(browser.find("#push-switch").is_selected(), "the switch is left off")
        self.assertEqual(browser.find("#push-state").get_attribute("role"), "alert")
        self.assertNotIn(said, browser.message(), "the message is said next to the switch, not at the top")
        if sends:
            self.assertEqual(api("GET", "/v1/me/push-subscriptions", student.token)["subscriptions"], [],
                             "no device was registered")

    def test_with_a_push_service_turning_on_registers_this_device_and_turning_off_removes_it(self):
        if not server_sends_notifications():
            self.skipTest("the server sends no notifications (GET /v1/push/vapid-public-key is 404: no --vapid-key)")
        student, browser = self.signed_in_at_the_switch(permission="granted")
        # The browser's push service, stubbed in every document this session loads (headless Chromium has none):
        # it hands out one subscription, kept in localStorage as a browser keeps its own.
        browser.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FAKE_PUSH_SERVICE})
        browser.open()
        browser.tab("account")
        browser.visible("#push-switch", "the switch shows")
        self.assertEqual(self.turn_on(browser), "Notifications are on for this device.")
        self.assertTrue(browser.find("#push-switch").is_selected())
        devices = api("GET", "/v1/me/push-subscriptions", student.token)["subscriptions"]
        self.assertEqual([(device["kind"], device["service"]) for device in devices], [("webpush", "fcm.googleapis.com")])

        # The switch says what is so at the next load, and off removes the device the page registered.
        browser.open()
        browser.tab("account")
        browser.wait(lambda driver: browser.find("#push-switch").is_selected(), "the switch shows on after a reload")
        browser.click("label[for='push-switch']")
        browser.wait(lambda driver: browser.text("#push-state") == "Notifications are off for this device."
                     and browser.find("#push-switch").is_enabled(),
                     lambda: f"#push-state says notifications are off (it says {browser.text('#push-state')!r})")
        self.assertFalse(browser.find("#push-switch").is_selected())
        self.assertEqual(api("GET", "/v1/me/push-subscriptions", student.token)["subscriptions"], [])
        self.assertIsNone(browser.js("return localStorage.getItem('test.fakeSubscription')"), "the browser unsubscribed")

    def test_notifications_blocked_for_the_site_are_said_to_be_blocked(self):
        _, browser = self.signed_in_at_the_switch(permission="denied")
        self.assertEqual(self.turn_on(browser), BLOCKED)
        self.assertFalse(browser.find("#push-switch").is_selected())

    def test_the_kinds_of_event_that_notify_are_shown_where_the_server_keeps_them(self):
        student, browser = self.signed_in_at_the_switch()
        try:
            preferences = api("GET", "/v1/me/push-preferences", student.token)
        except ApiError as error:
            self.assertEqual(error.status, 404, str(error))
            self.assertFalse(browser.find("#push-kinds").is_displayed(), "no choices on a server that keeps none")
            return
        browser.visible("#push-kinds", "the kinds of event show")
        shown = {box.get_attribute("data-kind"): box.is_selected() for box in browser.find_all("#push-kinds input")}
        self.assertEqual(shown, {kind: preferences[kind] for kind in ("poke", "friend_request", "vote_conflict", "vote_result", "alert")})
        self.assertEqual(set(shown), set(preferences), "every kind the server keeps is shown")
        browser.click("label[for='push-kind-poke']")
        browser.wait(lambda driver: api("GET", "/v1/me/push-preferences", student.token)["poke"] is (not shown["poke"]),
                     "unticking pokes is saved")

    def test_the_service_worker_shows_a_push_message_as_given_and_a_click_opens_its_panel(self):
        browser = self.browser()
        browser.open()
        # The worker's script in the page, with the parts a worker has and a page has not stubbed; it adds its
        # handlers to the window, where the test dispatches the events a browser would give the worker.
        browser.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            window.__shown = []; window.__posted = []; window.__opened = [];
            window.registration = {showNotification: async (title, options) => { window.__shown.push({title, options}); }};
            const page = {url: location.origin + '/#places', focus: async () => page,
                          postMessage: message => window.__posted.push(message)};
            window.__pages = [page];
            window.clients = {matchAll: async () => window.__pages, openWindow: async url => { window.__opened.push(url); },
                              claim: async () => {}};
            const script = document.createElement('script');
            script.src = '/sw.js';
            script.onload = () => done(true);
            script.onerror = () => done(false);
            document.head.append(script);""")
        dispatch = """
            const [type, fields] = arguments;
            const done = arguments[arguments.length - 1];
            const waits = [];
            const event = new Event(type);
            Object.assign(event, fields, {waitUntil: promise => waits.push(promise)});
            if (type === 'push') event.data = {json: () => fields.message};
            if (type === 'notificationclick') event.notification = {data: fields.data, close: () => { window.__closed = true; }};
            window.dispatchEvent(event);
            Promise.all(waits).then(() => done(null), error => done(String(error)));"""
        message = {"type": "poke", "title": "Mali poked you", "body": "Mali Srisuk (@mali) poked you",
                   "url": "/#friends", "tag": "poke-mali", "event": 42}
        self.assertIsNone(browser.driver.execute_async_script(dispatch, "push", {"message": message}))
        shown = browser.js("return window.__shown")
        self.assertEqual(len(shown), 1)
        self.assertEqual(shown[0]["title"], "Mali poked you")
        options = shown[0]["options"]
        self.assertEqual((options["body"], options["tag"], options["data"]["url"]),
                         ("Mali Srisuk (@mali) poked you", "poke-mali", "/#friends"))
        self.assertEqual(options["icon"], "/app/app-icon-192.png")
        status, headers = headers_of(options["icon"])
        self.assertEqual((status, headers["Content-Type"]), (200, "image/png"))

        # No tag: none is set; an address on another site is not followed.
        browser.driver.execute_async_script(dispatch, "push", {"message": {
            "type": "vote_finished", "title": "The vote 7KQ2MX has finished", "body": "3 of 3 voted",
            "url": "https://elsewhere.example/#votes", "event": 43}})
        later = browser.js("return window.__shown[1].options")
        self.assertNotIn("tag", later)
        self.assertEqual(later["data"]["url"], "/")

        # A click focuses the open page and tells it where to go; with no page open, it opens one there.
        self.assertIsNone(browser.driver.execute_async_script(dispatch, "notificationclick",
                                                              {"data": {"url": "/#votes/7KQ2MX"}}))
        self.assertTrue(browser.js("return window.__closed === true"), "the notification is closed")
        self.assertEqual(browser.js("return window.__posted"), [{"type": "open", "url": "/#votes/7KQ2MX"}])
        browser.js("window.__pages = []")
        browser.driver.execute_async_script(dispatch, "notificationclick", {"data": {"url": "/#friends"}})
        self.assertEqual(browser.js("return window.__opened"), [SERVER + "/#friends"])

    def test_a_notifications_address_opens_its_panel_in_the_open_page_without_reloading(self):
        browser = self.browser()
        browser.open("/#votes")
        browser.wait(lambda driver: browser.find("#panel-votes").is_displayed(), "/#votes opens the Votes panel")
        browser.js("window.__vicinityNotReloaded = true")
        # What the worker sends the page a notification was clicked in.
        browser.js("navigator.serviceWorker.dispatchEvent(new MessageEvent('message', "
                   "{data: {type: 'open', url: '/#friends'}}))")
        browser.wait(lambda driver: browser.find("#panel-friends").is_displayed(), "the Friends panel opens")
        self.assertEqual(browser.js("return location.hash"), "#friends")
        browser.assert_not_reloaded()


if __name__ == "__main__":
    unittest.main()
