"""The map page as students use it, at both sizes it is checked at, a 1280x800 desktop and a 375x812 phone:
- an error said beside the control that caused it, in view, in the form's own words;
- on a phone, the title above the map and a place chosen in the panel shown on the map; notices clear of the
  zoom buttons and the tabs, going by themselves;
- an outage of the server said as "Reconnecting…", live updates back within about two seconds of the server,
  and the errors that said it could not be reached gone with it;

Every coordinate comes from Data/*.csv. Scripts/check/browser.sh runs these before test_map_page.py, whose last
test checks every session's log for CSP violations and script errors.
"""

import sys
import time
import unittest

from vicinity_browser import SERVER, WAIT, Account, ApiError, Browser, Relay, api, building


SIZES = ((1280, 800, False), (375, 812, True))
# How far under its control an error may be and still read as the control's.
BESIDE_PX = 24
# notices.js: how long a notice stays.
NOTICE_SHOWN_MS = 15000
# The page's bound for live updates after the server comes back (stream.js, connection.js), and the slack a busy
# machine gets on top of it.
RECONNECT_BOUND_MS = 2000
RECONNECT_SLACK_MS = 1000

MEASUREMENTS = []


def measured(line):
    MEASUREMENTS.append(line)
    print(f"\n    {line}", file=sys.stderr, flush=True)


def setUpModule():
    try:
        api("GET", "/health")
    except (ApiError, OSError) as error:
        raise RuntimeError(f"no Vicinity server answers at {SERVER} (VICINITY_BROWSER_URL): {error}") from None


def tearDownModule():
    if MEASUREMENTS:
        print("\n" + "\n".join(MEASUREMENTS), file=sys.stderr, flush=True)


def size_name(width, height):
    return f"{width}x{height}"


# In the page: a box as plain numbers, and the viewport.
BOX = """
const box = (node) => { const r = node.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height}; };
"""


class UseTest(unittest.TestCase):
    maxDiff = None

    def browser(self, width=1280, height=800, mobile=False):
        browser = Browser(self, width, height, mobile)
        self.addCleanup(browser.close)
        return browser

    def said_beside(self, page, css, words):
        """Waits for `words` in the error slot that the control `css` names (aria-describedby), and checks that it
        is an alert, right under the control, and in the viewport; returns the slot's text."""
        def slot_text(driver):
            found = page.js("""
                const control = document.querySelector(arguments[0]);
                const ids = (control.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
                const slot = ids.map((id) => document.getElementById(id)).find((node) => node && node.textContent.trim());
                return slot ? [slot.id, slot.textContent.trim()] : null;""", css)
            return found if found and words in found[1] else None
        slot_id, text = page.wait(slot_text, lambda: f"{css} is said to have {words!r} beside it "
                                                     f"(#message says {page.message()!r})")
        where = page.js(BOX + """
            const [control, slot] = [document.querySelector(arguments[0]), document.getElementById(arguments[1])];
            return {control: box(control), slot: box(slot), role: slot.getAttribute('role'),
                    width: innerWidth, height: innerHeight};""", css, slot_id)
        self.assertEqual(where["role"], "alert", f"the error beside {css} is announced: {where}")
        slot, control = where["slot"], where["control"]
        self.assertGreaterEqual(slot["top"], 0, f"the error beside {css} is above the viewport: {where}")
        self.assertLessEqual(slot["bottom"], where["height"], f"the error beside {css} is below the viewport: {where}")
        self.assertGreaterEqual(slot["left"], 0, where)
        self.assertLessEqual(slot["right"], where["width"], where)
        gap = slot["top"] - control["bottom"]
        self.assertTrue(0 <= gap <= BESIDE_PX, f"the error is {gap:.0f} px under {css}: {where}")
        return text

    def deny_position(self, page):
        """The browser refuses the page its position, as after "Block" in its prompt."""
        page.driver.execute_cdp_cmd("Browser.setPermission", {
            "permission": {"name": "geolocation"}, "setting": "denied", "origin": page.js("return location.origin")})

    def slots_text(self, page, css):
        """The text of every slot the control `css` names in its aria-describedby."""
        return page.js("""
            const ids = (document.querySelector(arguments[0]).getAttribute('aria-describedby') || '').split(' ');
            return ids.map((id) => document.getElementById(id)?.textContent.trim() ?? '').join('');""", css)

    def assert_no_wire_names(self, page, css, names):
        text = page.text(css)
        for name in names:
            self.assertNotIn(f"{name}:", text, f"{css} names the field {name!r} as the server does: {text!r}")

    # Feedback where it is seen

    def test_an_error_shows_beside_the_control_that_caused_it_in_the_forms_own_words(self):
        hall_of_science = building("csulb-hsci")
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                account = Account("Nok", "Srisuk", "nok").sign_up_through_api()
                page = self.browser(width, height, mobile)
                page.open("/")

                page.click("#temples-button")
                self.said_beside(page, "#temples-button", "Choose a point first")

                page.submit("#place-search-form")
                self.said_beside(page, "#place-search", "Type a name or a building code to search for.")
                self.assertEqual(page.find("#place-search").get_attribute("aria-invalid"), "true")

                self.deny_position(page)
                page.click("#locate-me")
                self.said_beside(page, "#locate-me", "The browser was not allowed to tell your position.")
                # What was said of the temples button no longer stands once another control is used.
                self.assertEqual(self.slots_text(page, "#temples-button"), "")

                page.fill("#point-lat", "north")
                page.fill("#point-lon", "west")
                page.submit("#point-form")
                self.said_beside(page, "#point-lat", "Latitude must be a number of degrees")
                self.said_beside(page, "#point-lon", "Longitude must be a number of degrees")
                self.assertEqual(page.js("return document.activeElement.id"), "point-lat", "the keyboard goes to the first field wrong")

                # Signed in, an empty vote form: each field's error under it, named as its label names it.
                page.sign_in(account)
                page.set_point(hall_of_science)
                page.tab("votes")
                page.submit("#vote-open-form")
                self.said_beside(page, "#vote-subject", "Subject must not be empty")
                for css, words in (("#vote-options", "Options must hold 2 to 20 options"),
                                   ("#vote-password", "Password must be exactly 6 digits")):
                    page.js("arguments[0].scrollIntoView({block: 'center'})", page.find(css))
                    self.said_beside(page, css, words)
                self.assertEqual(page.js("return document.activeElement.id"), "vote-subject")
                self.assert_no_wire_names(page, "#vote-open-form", ["subject", "options", "password", "participants"])
                self.assertEqual(page.message(), "", "the errors are said beside the fields, not at the top")
                page.assert_not_reloaded()

    # On a phone

    def test_the_title_is_above_the_map_and_a_place_chosen_in_the_panel_shows_on_the_map(self):
        library = building("csulb-lib")
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                page = self.browser(width, height, mobile)
                page.open("/")
                boxes = page.js(BOX + "return {title: box(document.querySelector('.app-header h1')), map: box(document.getElementById('map'))};")
                self.assertGreaterEqual(boxes["title"]["top"], 0, boxes)
                if mobile:
                    self.assertLessEqual(boxes["title"]["bottom"], boxes["map"]["top"], f"the title is above the map: {boxes}")

                page.fill("#place-search", library.name)
                page.submit("#place-search-form")
                result = page.visible(f'#place-results li[data-place-id="{library.id}"] button', "the search lists the library")
                # Read down to the results, as one does on a phone, then choose.
                page.js("window.scrollTo(0, arguments[0].getBoundingClientRect().top + scrollY - 120)", result)
                before = self.map_shown(page)
                if mobile:
                    self.assertLess(before, 0.5, f"the map is out of view at the results ({before:.0%} shows)")
                result.click()
                page.wait(lambda driver: page.pin_at("point", "point", library), "the point's pin is at the library")
                after = page.wait(lambda driver: (shown := self.map_shown(page)) >= 0.9 and shown,
                                  lambda: f"the map shows once a place is chosen ({self.map_shown(page):.0%} shows)")
                pin = page.js(BOX + """
                    return {pin: box(document.querySelector('#map [data-kind="point"]')), map: box(document.getElementById('map')),
                            height: innerHeight};""")
                self.assertTrue(pin["map"]["top"] <= pin["pin"]["top"] and pin["pin"]["bottom"] <= min(pin["map"]["bottom"], pin["height"]),
                                f"the chosen place's pin is on the map in view: {pin}")
                measured(f"{size_name(width, height)}: the map showed {before:.0%} at the results, {after:.0%} once a place was chosen")

    def map_shown(self, page):
        return page.js("""
            const box = document.getElementById('map').getBoundingClientRect();
            return Math.max(0, Math.min(box.bottom, innerHeight) - Math.max(box.top, 0)) / box.height;""")

    def test_a_notice_keeps_clear_of_the_zoom_buttons_and_tabs_and_goes_by_itself(self):
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
                pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
                pim.befriend_through_api(nok)
                page = self.browser(width, height, mobile)
                page.open("/")
                page.sign_in(nok)
                page.tab("friends")
                page.visible(page.friend_item(pim), "Pim is listed")
                page.js("window.scrollTo(0, 0)")
                self.poked(page, pim, nok)
                shown_at = time.monotonic()
                where = page.js(BOX + """
                    const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
                    const notices = box(document.getElementById('notices'));
                    const covered = {};
                    for (const [name, css] of [['zoom buttons', '.leaflet-control-zoom'], ['tabs', '.tabs'], ['title', '.app-header h1']]) {
                      covered[name] = overlaps(notices, box(document.querySelector(css)));
                    }
                    return {covered, notices, height: innerHeight};""")
                self.assertEqual(where["covered"], {"zoom buttons": False, "tabs": False, "title": False}, where)
                self.assertLessEqual(where["notices"]["bottom"], where["height"], f"the notice is in view: {where}")
                page.wait(lambda driver: not [item for item in page.find_all("#notices li") if "Pim" in item.text],
                          "the notice goes by itself", timeout=NOTICE_SHOWN_MS / 1000 + WAIT)
                measured(f"{size_name(width, height)}: a notice went by itself after {time.monotonic() - shown_at:.1f} s "
                         f"(notices.js: {NOTICE_SHOWN_MS / 1000:g} s)")

    def poked(self, page, friend, account):
        """Has `friend` poke `account` until the page shows the notice (the page's live stream may still be
        opening at the first poke); returns the notice."""
        for _ in range(3):
            api("POST", f"/v1/friends/{account.id}/pokes", friend.token)
            try:
                return page.wait(lambda driver: [item for item in page.find_all("#notices li")
                                                 if item.is_displayed() and friend.first_name in item.text],
                                 "the poke shows as a notice", timeout=5)[0]
            except AssertionError:
                continue
        self.fail("no poke showed as a notice")

    # Outages

    def test_after_an_outage_live_updates_come_back_within_two_seconds_and_the_errors_go(self):
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
                pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
                pim.befriend_through_api(nok)
                relay = Relay()
                self.addCleanup(relay.close)
                page = self.browser(width, height, mobile)
                page.open("/", server=relay.url)
                page.sign_in(nok)
                page.tab("friends")
                page.visible(page.friend_item(pim), "Pim is listed")
                self.poked(page, pim, nok)
                self.assertEqual(page.text("#connection"), "", "nothing to say while the page is in touch")

                relay.cut()
                note = page.wait(lambda driver: "Reconnecting" in page.text("#connection") and page.find("#connection"),
                                 lambda: f"the page says it is reconnecting (it says {page.text('#connection')!r})")
                self.assert_in_view(page, note, "the reconnecting note")
                self.assertEqual(note.get_attribute("role"), "status")
                # Meanwhile a search fails, said beside it.
                page.tab("places")
                page.fill("#place-search", building("csulb-lib").name)
                page.submit("#place-search-form")
                self.said_in_form(page, "#place-search-form", "could not be reached")

                page.js("""
                    window.__vicinityBackAt = null;
                    const note = document.getElementById('connection');
                    new MutationObserver((changes, observer) => {
                      if (note.textContent === '') { window.__vicinityBackAt = Date.now(); observer.disconnect(); }
                    }).observe(note, {childList: true, characterData: true, subtree: true});""")
                time.sleep(1)  # the outage outlasts a probe or two
                relay.restore()
                restored_at = time.time() * 1000
                page.wait(lambda driver: page.js("return window.__vicinityBackAt") is not None,
                          lambda: f"the reconnecting note goes (it says {page.text('#connection')!r})")
                back_ms = page.js("return window.__vicinityBackAt") - restored_at
                measured(f"{size_name(width, height)}: live updates back {back_ms:.0f} ms after the server "
                         f"(bound {RECONNECT_BOUND_MS} ms, {RECONNECT_SLACK_MS} ms slack)")
                self.assertLessEqual(back_ms, RECONNECT_BOUND_MS + RECONNECT_SLACK_MS)
                page.wait(lambda driver: page.text("#place-search-form-error") == "",
                          lambda: f"the 'could not be reached' error goes (it says {page.text('#place-search-form-error')!r})")
                self.assertNotIn("could not be reached", page.message())
                # Live again: a poke made now arrives.
                page.js("document.getElementById('notices').replaceChildren()")
                api("POST", f"/v1/friends/{nok.id}/pokes", pim.token)
                page.wait(lambda driver: [item for item in page.find_all("#notices li") if "Pim" in item.text],
                          "a poke after the outage shows without reload")
                page.assert_not_reloaded()

    def said_in_form(self, page, form_css, words):
        slot = page.wait(lambda driver: words in page.text(f"{form_css} .form-error") and page.find(f"{form_css} .form-error"),
                         lambda: f"{form_css} says {words!r} (#message says {page.message()!r})")
        self.assert_in_view(page, slot, f"the error of {form_css}")
        return page.text(slot)

    def assert_in_view(self, page, element, what):
        where = page.js(BOX + "return {box: box(arguments[0]), width: innerWidth, height: innerHeight};", element)
        box = where["box"]
        self.assertTrue(box["height"] > 0 and box["top"] >= 0 and box["bottom"] <= where["height"]
                        and box["left"] >= 0 and box["right"] <= where["width"], f"{what} is in view: {where}")


if __name__ == "__main__":
    unittest.main()
