"""The map page as students use it, at both sizes it is checked at, a 1280x800 desktop and a 375x812 phone:
- an error said beside the control that caused it, in view, in the form's own words;

Every coordinate comes from Data/*.csv. Scripts/check/browser.sh runs these before test_map_page.py, whose last
test checks every session's log for CSP violations and script errors.
"""

import sys
import unittest

from vicinity_browser import SERVER, Account, ApiError, Browser, api, building


SIZES = ((1280, 800, False), (375, 812, True))
# How far under its control an error may be and still read as the control's.
BESIDE_PX = 24

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


if __name__ == "__main__":
    unittest.main()
