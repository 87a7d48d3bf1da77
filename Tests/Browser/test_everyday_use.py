"""The map page as students use it, at both sizes it is checked at, a 1280x800 desktop and a 375x812 phone:
- an error said beside the control that caused it, in view, in the form's own words;
- on a phone, the title above the map and a place chosen in the panel shown on the map; notices clear of the
  zoom buttons and the tabs, going by themselves;
- an outage of the server said as "Reconnecting…", live updates back within about two seconds of the server,
  and the errors that said it could not be reached gone with it;
- the main flows by keyboard alone, the focus always visible and kept after signing in; signing out with a
  direction line shown; temples too far to walk to said to be, with no walking directions; an accessibility
  check (axe-core, from PyPI's axe-selenium-python where Scripts/check/browser.sh could install it, and labels,
  focus order and contrast by hand).

Every coordinate comes from Data/*.csv. Scripts/check/browser.sh runs these before test_map_page.py, whose last
test checks every session's log for CSP violations and script errors.
"""

import time
import unittest

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from vicinity_browser import (SIZES, WAIT, Account, Browser, Measurements, Relay, api, building, require_server, size_name,
                              temple_named)

try:
    from axe_selenium_python import Axe
except ImportError:  # not installed: the hand-made checks below still run
    Axe = None

# How far under its control an error may be and still read as the control's.
BESIDE_PX = 24
# notices.js: how long a notice stays.
NOTICE_SHOWN_MS = 15000
# The page's bound for live updates after the server comes back (stream.js, connection.js), and the slack a busy
# machine gets on top of it.
RECONNECT_BOUND_MS = 2000
RECONNECT_SLACK_MS = 1000
# walking.js: the farthest a temple is offered walking directions to.
WALKING_LIMIT_M = 5000
# The least contrast WCAG 2.1 asks of text (1.4.3, AA), and of large text: 24 px, or bold at 18.66 px.
TEXT_CONTRAST = 4.5
LARGE_TEXT_CONTRAST = 3.0

measured = Measurements()


def setUpModule():
    require_server()


def tearDownModule():
    measured.report()


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

                first = self.back_after_restoring(page, relay)
                page.wait(lambda driver: page.text("#place-search-form-error") == "",
                          lambda: f"the 'could not be reached' error goes (it says {page.text('#place-search-form-error')!r})")
                self.assertNotIn("could not be reached", page.message())
                # Again at once: a stream just opened, that has delivered nothing yet, is cut too.
                relay.cut()
                page.wait(lambda driver: "Reconnecting" in page.text("#connection"), "the page says it is reconnecting again")
                second = self.back_after_restoring(page, relay)
                measured(f"{size_name(width, height)}: live updates back {first:.0f} ms after the server, and "
                         f"{second:.0f} ms after a second outage right after (bound {RECONNECT_BOUND_MS} ms, "
                         f"{RECONNECT_SLACK_MS} ms slack)")
                self.assertLessEqual(max(first, second), RECONNECT_BOUND_MS + RECONNECT_SLACK_MS)
                # Live again: a poke made now arrives.
                page.js("document.getElementById('notices').replaceChildren()")
                api("POST", f"/v1/friends/{nok.id}/pokes", pim.token)
                page.wait(lambda driver: [item for item in page.find_all("#notices li") if "Pim" in item.text],
                          "a poke after the outage shows without reload")
                page.assert_not_reloaded()

    def back_after_restoring(self, page, relay):
        """Restores the relay after a second, and returns how long after it the reconnecting note went (ms, by the
        browser's clock, which is this machine's)."""
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
        return page.js("return window.__vicinityBackAt") - restored_at

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

    # Keyboard and details

    def test_the_main_flows_by_keyboard_alone_with_the_focus_visible_and_kept_after_signing_in(self):
        wat_pho = temple_named("Wat Pho")
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                account = Account("Nok", "Srisuk", "nok").sign_up_through_api()
                page = self.browser(width, height, mobile)
                page.open("/")
                page.js("document.activeElement.blur()")
                stops = []

                # Search for Wat Pho and choose it, by keyboard.
                self.tab_to(page, stops, "#place-search")
                self.keys(page, wat_pho.name, Keys.ENTER)
                page.visible(f'#place-results li[data-place-id="{wat_pho.id}"]', "Wat Pho is found")
                self.tab_to(page, stops, f'#place-results li[data-place-id="{wat_pho.id}"] button')
                self.keys(page, Keys.ENTER)
                page.wait(lambda driver: wat_pho.name in page.text("#point-info"), "Wat Pho is the point")
                self.tab_to(page, stops, "#temples-button")
                self.keys(page, Keys.ENTER)
                page.wait(lambda driver: page.find_all("#temple-results li[data-place-id]"), "temples are listed")

                # On to the map, a temple's pin and the zoom buttons.
                self.tab_to(page, stops, "#map")
                self.tab_to(page, stops, '#map .leaflet-marker-icon[data-kind="temple"]')
                pin = page.js(BOX + "return {pin: box(document.activeElement), map: box(document.getElementById('map'))};")
                self.assertTrue(pin["map"]["left"] <= pin["pin"]["left"] and pin["pin"]["right"] <= pin["map"]["right"]
                                and pin["map"]["top"] <= pin["pin"]["top"] and pin["pin"]["bottom"] <= pin["map"]["bottom"],
                                f"the focused pin is on the map in view: {pin}")
                self.tab_to(page, stops, "#map .leaflet-control-zoom-in")
                self.keys(page, Keys.ENTER)

                # Sign in: back to the tabs, the arrow keys to Account, the form, Enter.
                self.tab_to(page, stops, "#tab-places", backwards=True)
                self.keys(page, Keys.END)
                self.assertEqual(page.js("return document.activeElement.id"), "tab-account")
                self.tab_to(page, stops, "#signin-login")
                self.keys(page, account.username, Keys.TAB, account.password, Keys.ENTER)
                page.wait_signed_in(account)
                focused = page.wait(lambda driver: page.js(
                    "const a = document.activeElement; return a && a !== document.body && a.getClientRects().length > 0 ? (a.id || a.outerHTML.slice(0, 80)) : null"),
                    "the focus stays on the page after signing in")
                self.assertEqual(focused, "whoami", "the focus goes to who is signed in")
                self.assert_focus_ring(page, stops)
                self.keys(page, Keys.TAB)
                self.assertEqual(page.js("return document.activeElement.id"), "signout", "the next stop is Sign out")
                self.assert_focus_ring(page, stops)
                self.keys(page, Keys.ENTER)
                page.wait(lambda driver: "Signed out." in page.message(), "signed out")
                self.assertEqual(page.js("return document.activeElement.id"), "signin-heading", "the focus goes to Sign in")

                kinds = sorted({stop["what"] for stop in stops})
                measured(f"{size_name(width, height)}: {len(stops)} focus stops by keyboard, each with a visible ring "
                         f"(outline at least 2 px, or a box shadow): {', '.join(kinds)}")

    def keys(self, page, *keys):
        ActionChains(page.driver).send_keys(*keys).perform()

    def tab_to(self, page, stops, css, backwards=False, limit=120):
        """Presses Tab (Shift+Tab) until the focus is on an element matching `css`, checking the focus ring at
        every stop on the way."""
        for _ in range(limit):
            if backwards:
                ActionChains(page.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
            else:
                self.keys(page, Keys.TAB)
            if page.js("return document.activeElement === document.body"):
                continue  # past the page's last stop
            self.assert_focus_ring(page, stops)
            if page.js("return document.activeElement.matches(arguments[0])", css):
                return
        self.fail(f"{limit} presses of Tab never reached {css}")

    def assert_focus_ring(self, page, stops):
        ring = page.js("""
            const a = document.activeElement; const s = getComputedStyle(a);
            return {what: a.id ? '#' + a.id : a.tagName.toLowerCase() + (a.className && a.className.baseVal === undefined ? '.' + String(a.className).split(' ')[0] : ''),
                    visible: a.matches(':focus-visible'), outline: s.outlineStyle, width: parseFloat(s.outlineWidth) || 0,
                    shadow: s.boxShadow};""")
        stops.append(ring)
        self.assertTrue(ring["visible"] and ((ring["outline"] != "none" and ring["width"] >= 2) or ring["shadow"] != "none"),
                        f"no visible focus ring on {ring}")

    def test_signing_out_with_a_direction_line_shown_says_only_signed_out(self):
        hall_of_science, library = building("csulb-hsci"), building("csulb-lib")
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
                pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
                pim.befriend_through_api(nok)
                pim.share_through_api(library)
                nok.share_through_api(hall_of_science)
                page = self.browser(width, height, mobile)
                page.open("/")
                page.sign_in(nok)
                page.tab("friends")
                page.click(page.visible(page.friend_item(pim) + " button.show-direction", "Pim has a direction button"))
                page.visible("#direction-info", "the direction to Pim shows")
                page.wait(lambda driver: page.find_all("#direction-line"), "the line is on the map")
                page.tab("account")
                page.click("#signout")
                page.wait(lambda driver: "Signed out." in page.message(), "signed out")
                time.sleep(1)  # anything that would still go wrong has done so by now
                self.assertEqual(page.message(), "Signed out.")
                self.assertNotIn("error", page.find("#message").get_attribute("class") or "")
                self.assertEqual([text for text in page.js(
                    "return [...document.querySelectorAll('.action-error, .form-error')].map((n) => n.textContent.trim())") if text], [])
                self.assertEqual(page.find_all("#direction-line"), [], "the line is gone")

    def test_temples_too_far_to_walk_to_say_how_far_and_offer_no_walking_directions(self):
        hall_of_science = building("csulb-hsci")
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                page = self.browser(width, height, mobile)
                page.open("/")
                page.set_point(hall_of_science)
                page.click("#temples-button")
                items = page.wait(lambda driver: page.find_all("#temple-results li[data-place-id]"), "temples are listed")
                answer = api("GET", f"/v1/temples/recommended?lat={hall_of_science.lat_text}&lon={hall_of_science.lon_text}&radius=1000&limit=10")
                nearest_km = round(answer["temples"][0]["distance_m"] / 1000)
                note = page.text("#temple-results li.empty")
                self.assertIn(f"the nearest is {nearest_km:,} km away.", note)
                far = 0
                for item, temple in zip(items, answer["temples"]):
                    distance = page.text(item.find_element("css selector", ".temple-distance"))
                    links = item.find_elements("css selector", "a.directions")
                    if temple["distance_m"] > WALKING_LIMIT_M:
                        far += 1
                        self.assertRegex(distance, r"^\d{1,3}(,\d{3})* km$", "thousands are grouped")
                        self.assertEqual(links, [], f"walking directions to {temple['name']}, {distance} away")
                        self.assertIn("Too far to walk", item.text)
                    else:
                        self.assertEqual(len(links), 1)
                self.assertGreater(far, 0, "from CSULB the temples are in Thailand")
                measured(f"{size_name(width, height)}: from {hall_of_science.name}, the nearest temple is said to be "
                         f"{nearest_km:,} km away; {far} of {len(items)} listed offer no walking directions")

    # The accessibility check

    def test_the_page_passes_an_accessibility_check_at_both_sizes(self):
        wat_pho = temple_named("Wat Pho")
        for width, height, mobile in SIZES:
            with self.subTest(size=size_name(width, height)):
                page = self.browser(width, height, mobile)
                page.open("/")
                page.set_point(wat_pho)
                page.click("#temples-button")
                page.wait(lambda driver: page.find_all("#temple-results li[data-place-id]"), "temples are listed")
                # An error beside a control, to be checked too: the browser refuses its position.
                self.deny_position(page)
                page.click("#locate-me")
                self.said_beside(page, "#locate-me", "not allowed")
                for tab in ("places", "account"):
                    page.tab(tab)
                    where = f"{size_name(width, height)}, {tab} tab"
                    self.assert_labelled(page, where)
                    self.assert_focus_order(page, where)
                    self.assert_contrast(page, where)
                    if Axe is not None:
                        self.assert_axe(page, where)
                if Axe is None:
                    measured(f"{size_name(width, height)}: axe-selenium-python is not installed; labels, focus order and "
                             "contrast checked by hand only")

    def assert_labelled(self, page, where):
        unlabelled = page.js("""
            return [...document.querySelectorAll('input, select, textarea, button, a[href], [tabindex]')]
              .filter((node) => node.getClientRects().length > 0 && node.type !== 'hidden')
              .filter((node) => !(node.labels && node.labels.length) && !node.getAttribute('aria-label')
                                && !node.getAttribute('aria-labelledby') && !node.getAttribute('title')
                                && !node.textContent.trim())
              .map((node) => node.outerHTML.slice(0, 120));""")
        self.assertEqual(unlabelled, [], f"{where}: controls without a name")

    def assert_focus_order(self, page, where):
        """The panel's tab stops come in the order they are read: top to bottom (a row's stops left to right)."""
        # From the top, where the sticky tabs are where they belong.
        backwards = page.js("""
            document.getElementById('side').scrollTop = 0;
            window.scrollTo(0, 0);
            const stops = [...document.querySelectorAll('#side input, #side select, #side textarea, #side button, #side a[href], #side [tabindex]')]
              .filter((node) => node.tabIndex >= 0 && !node.disabled && node.getClientRects().length > 0);
            const positive = [...document.querySelectorAll('[tabindex]')].filter((node) => node.tabIndex > 0).map((node) => node.outerHTML.slice(0, 80));
            const out = [];
            for (let i = 1; i < stops.length; i += 1) {
              const [a, b] = [stops[i - 1].getBoundingClientRect(), stops[i].getBoundingClientRect()];
              // Later in the order but wholly above the one before it, and not beside it in a row.
              if (b.bottom <= a.top) out.push(stops[i - 1].outerHTML.slice(0, 60) + ' then ' + stops[i].outerHTML.slice(0, 60));
            }
            return {out, positive};""")
        self.assertEqual(backwards["positive"], [], f"{where}: a positive tabindex changes the order")
        self.assertEqual(backwards["out"], [], f"{where}: tab stops out of reading order")

    def assert_contrast(self, page, where):
        """Every piece of text shown against its nearest opaque background: 4.5:1, or 3:1 for large text."""
        low = page.js("""
            const parse = (c) => { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : null; };
            const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
                                         return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
            const background = (node) => { for (; node; node = node.parentElement) { const c = parse(getComputedStyle(node).backgroundColor);
                                              if (c && (c.length < 4 || c[3] >= 0.99)) return c; } return [255, 255, 255]; };
            const out = [];
            const walker = document.createTreeWalker(document.getElementById('side'), NodeFilter.SHOW_TEXT);
            const seen = new Set();
            while (walker.nextNode()) {
              const node = walker.currentNode.parentElement;
              if (!walker.currentNode.textContent.trim() || seen.has(node) || node.getClientRects().length === 0) continue;
              seen.add(node);
              const style = getComputedStyle(node);
              if (style.visibility === 'hidden' || parseFloat(style.opacity) < 1) continue;
              const fg = parse(style.color), bg = background(node);
              const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
              const ratio = (l1 + 0.05) / (l2 + 0.05);
              const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
              const needed = size >= 24 || (bold && size >= 18.66) ? arguments[1] : arguments[0];
              if (ratio < needed) out.push(`${ratio.toFixed(2)} < ${needed}: ${node.tagName.toLowerCase()}.${node.className} "${node.textContent.trim().slice(0, 40)}"`);
            }
            return out;""", TEXT_CONTRAST, LARGE_TEXT_CONTRAST)
        self.assertEqual(low, [], f"{where}: text with too little contrast")

    def assert_axe(self, page, where):
        axe = Axe(page.driver)
        axe.inject()
        # axe-core 3.1.1 (what axe-selenium-python 2.1.6 ships for Python before 3.12) takes autocomplete="off" for
        # an invalid value; axe-core 3.1.2 no longer does (dequelabs/axe-core#1109).
        results = axe.run(options="{rules: {'autocomplete-valid': {enabled: false}}}")
        serious = [violation for violation in results["violations"] if violation.get("impact") in ("serious", "critical")]
        lines = [f"{violation['id']} ({violation['impact']}): {violation['help']} — "
                 + "; ".join(node["target"][0] if node["target"] else "?" for node in violation["nodes"][:5])
                 for violation in results["violations"]]
        version = page.js("return window.axe && axe.version")
        measured(f"{where}: axe-core {version}: {len(results['passes'])} rules "
                 f"passed, {len(results['violations'])} violated" + ("".join(f"\n      {line}" for line in lines)))
        self.assertEqual(serious, [], f"{where}: axe-core finds serious or critical violations:\n" + "\n".join(lines))


if __name__ == "__main__":
    unittest.main()
