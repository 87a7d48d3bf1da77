"""The map page in a real browser: headless Chromium, driven by Selenium, against a running server over the
shipped data (VICINITY_BROWSER_URL). Scripts/check/browser.sh starts such a server and runs these:

    VICINITY_BROWSER_URL=http://127.0.0.1:18085 /usr/bin/python3 -m unittest discover -s Tests/Browser -v

Every coordinate comes from Data/*.csv; every username is new for the run. The tests run in the order of
ORDER below: the flows first, then the measurements and screenshots, then the check of every session's log.
"""

import base64
import collections
import html.parser
import json
import pathlib
import os
import random
import re
import string
import time
import unittest
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By

from vicinity_browser import (BROWSER_LOG, ROOT, RUN, SERVER, WAIT, Account, Browser, Measurements, Place, api,
                              building, distance_in_metres, png_size, query, require_server, temple_named)

SCREENSHOTS = pathlib.Path(os.environ.get("VICINITY_BROWSER_SCREENSHOTS", ROOT / "docs" / "screenshots"))
VOTE_ID = re.compile(r"[2-9A-HJKMNP-TV-Z]{6}")
DIRECTIONS = "https://www.google.com/maps/dir/?api=1&destination="
MOVE_BOUND_MS = 2000
measured = Measurements()


def setUpModule():
    require_server()


def tearDownModule():
    measured.report()


class PageTest(unittest.TestCase):
    maxDiff = None

    def browser(self, width=1280, height=800, mobile=False):
        browser = Browser(self, width, height, mobile)
        self.addCleanup(browser.close)
        return browser

    def within(self, browser, css, selector):
        """The first element matching `selector` inside the element `css`."""
        return browser.find(css).find_element(By.CSS_SELECTOR, selector)

    def button_of(self, item):
        """A list item's button, or the item itself when it is the button."""
        buttons = item.find_elements(By.CSS_SELECTOR, "button")
        return buttons[0] if buttons else item

    def cast(self, browser, vote_id, subject, option, password):
        browser.wait(lambda driver: browser.find("#vote-detail").is_displayed()
                     and browser.find("#vote-detail").get_attribute("data-vote-id") == vote_id,
                     f"#vote-detail shows vote {vote_id}")
        self.assertEqual(browser.text("#vote-detail .vote-subject"), subject)
        radio = browser.find(f'input[name="vote-option"][value="{option}"]')
        browser.click(radio)
        self.assertTrue(radio.is_selected(), f"option {option} is chosen")
        browser.fill("#ballot-password", password)
        browser.click("#cast-ballot")

    def open_vote_through_api(self, account, subject, options, password):
        hall_of_science = building("csulb-hsci")
        return api("POST", "/v1/votes", account.token, {
            "subject": subject, "options": options, "participants": 3, "password": password, "duration": "15m",
            "visibility": "private", "lat": hall_of_science.lat, "lon": hall_of_science.lon})["id"]

    def show_vote(self, browser, vote_id):
        browser.fill("#vote-find-id", vote_id)
        browser.submit("#vote-find-form")
        browser.wait(lambda driver: browser.find("#vote-detail").is_displayed()
                     and browser.find("#vote-detail").get_attribute("data-vote-id") == vote_id,
                     f"#vote-detail shows vote {vote_id}")

    def result(self, browser):
        counts = {}
        for item in browser.find_all("#vote-result li"):
            names = item.find_elements(By.CSS_SELECTOR, ".option-name")
            numbers = re.findall(r"\d+", browser.text(item.find_element(By.CSS_SELECTOR, ".option-count"))) if names else []
            if names and numbers:
                counts[browser.text(names[0])] = int(numbers[0])
        return counts


class SecurityTest(PageTest):
    def test_the_page_is_served_with_a_content_security_policy_without_unsafe_inline(self):
        status, headers, _ = api("GET", "/", raw=True)
        self.assertEqual(status, 200)
        policy = headers.get("Content-Security-Policy")
        self.assertIsNotNone(policy, "GET / has no Content-Security-Policy header")
        self.assertNotIn("'unsafe-inline'", policy)
        self.assertNotIn("'unsafe-eval'", policy)
        self.assertRegex(policy, r"(^|;)\s*script-src 'self'\s*(;|$)")
        self.assertRegex(policy, r"(^|;)\s*default-src 'none'")

    def test_the_page_html_has_no_inline_script_style_or_event_handler(self):
        _, headers, body = api("GET", "/", raw=True)
        self.assertTrue(headers.get("Content-Type", "").startswith("text/html"), headers.get("Content-Type"))
        finder = InlineFinder()
        finder.feed(body.decode("utf-8"))
        self.assertEqual(finder.found, [], "index.html has what the CSP blocks")


class InlineFinder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script" and "src" not in attributes:
            self.found.append("an inline <script>")
        if tag == "style":
            self.found.append("a <style> element")
        for name, value in attrs:
            if name == "style":
                self.found.append(f"a style attribute on <{tag}>")
            if name.startswith("on"):
                self.found.append(f"an {name} handler on <{tag}>")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"a javascript: URL on <{tag}>")


class GuestTest(PageTest):
    def test_a_guest_finds_wat_pho_and_gets_temples_with_distances_and_directions_links(self):
        wat_pho = temple_named("Wat Pho")
        browser = self.browser()
        browser.open("/")
        self.assertIsNone(browser.js("return sessionStorage.getItem('vicinity.token')"), "a new visitor is a guest")
        browser.tab("places")
        browser.fill("#place-search", "Wat Pho")
        browser.submit("#place-search-form")
        result = browser.visible(f'#place-results li[data-place-id="{wat_pho.id}"]',
                                 "the search for 'Wat Pho' lists Wat Pho")
        browser.click(self.button_of(result))
        browser.wait(lambda driver: "Wat Pho" in browser.text("#point-info"),
                     "#point-info names Wat Pho once it is picked")

        browser.click("#temples-button")
        items = browser.wait(lambda driver: browser.find_all("#temple-results li[data-place-id]"),
                             "#temple-results lists temples")
        answer = api("GET", f"/v1/temples/recommended?{query(lat=wat_pho.lat_text, lon=wat_pho.lon_text, limit=500, radius=50000)}")
        expected = {temple["id"]: temple for temple in answer["temples"]}
        shown = [item.get_attribute("data-place-id") for item in items]
        self.assertEqual(shown[0], wat_pho.id, "the nearest temple to Wat Pho is Wat Pho")
        self.assertGreater(len(shown), 1, "more temples than Wat Pho itself are within reach of it")
        self.assertEqual(shown, [temple["id"] for temple in answer["temples"]][:len(shown)],
                         "temples are listed nearest first, as the service answers")
        for item, temple_id in zip(items, shown):
            temple = expected[temple_id]
            self.assertEqual(browser.text(item.find_element(By.CSS_SELECTOR, ".temple-name")), temple["name"])
            distance_text = browser.text(item.find_element(By.CSS_SELECTOR, ".temple-distance"))
            distance = distance_in_metres(distance_text)
            self.assertIsNotNone(distance, f"{temple['name']}: {distance_text!r} is no distance")
            slack = 50 if "km" in distance_text else max(1, 0.01 * temple["distance_m"])
            self.assertLessEqual(abs(distance - temple["distance_m"]), slack,
                                 f"{temple['name']}: {distance_text!r} against {temple['distance_m']:.1f} m")
            link = item.find_element(By.CSS_SELECTOR, "a.directions")
            href = link.get_attribute("href")
            self.assertTrue(href.startswith(DIRECTIONS), href)
            self.assertEqual(href, temple["directions_url"])
            self.assertEqual(link.get_attribute("target"), "_blank")
            self.assertIn("noopener", (link.get_attribute("rel") or "").split())
        self.assertEqual(distance_in_metres(browser.text(items[0].find_element(By.CSS_SELECTOR, ".temple-distance"))), 0)
        browser.assert_not_reloaded()


    def test_with_a_point_chosen_temples_and_votes_come_first_and_the_long_place_list_is_collapsed(self):
        library = building("csulb-lib")
        for width, height, mobile in ((1280, 800, False), (375, 812, True)):
            browser = self.browser(width=width, height=height, mobile=mobile)
            browser.open("/")
            browser.set_point(library)
            items = browser.wait(lambda driver: browser.find_all("#nearby-results li[data-place-id]"),
                                 "the places within 1000 m are listed")
            shown = [item for item in items if item.is_displayed()]
            self.assertLessEqual(len(shown), 5, f"{width} px: at most five places before 'Show more'")
            if len(items) > 5:
                more = browser.visible("#nearby-results button.show-all", "a button shows the rest")
                self.assertEqual(more.get_attribute("aria-expanded"), "false")
                browser.click(more)
                browser.wait(lambda driver: all(item.is_displayed() for item in items), "every place shows once asked")
                self.assertEqual(more.get_attribute("aria-expanded"), "true")
            # The temples' button sits right under the point, not below fifty places.
            gap = browser.js("""
                return document.getElementById('temples-button').getBoundingClientRect().top
                     - document.getElementById('point-info').getBoundingClientRect().bottom;""")
            self.assertLess(gap, 200, f"{width} px: the temples' button is {gap:.0f} px below the point")

    def test_a_guest_with_no_temple_nearby_is_told_how_far_the_nearest_one_is(self):
        hall_of_science = building("csulb-hsci")
        browser = self.browser()
        browser.open("/")
        browser.set_point(hall_of_science)
        browser.click("#temples-button")
        items = browser.wait(lambda driver: browser.find_all("#temple-results li[data-place-id]"),
                             "#temple-results lists the nearest temples although none is within reach")
        answer = api("GET", f"/v1/temples/recommended?{query(lat=hall_of_science.lat_text, lon=hall_of_science.lon_text, limit=10, radius=1000)}")
        self.assertFalse(answer["within_radius"])
        self.assertEqual([item.get_attribute("data-place-id") for item in items],
                         [temple["id"] for temple in answer["temples"]])
        note = browser.text("#temple-results li.empty")
        self.assertRegex(note, r"^No temple within 1(\.0)? km; the nearest is [\d,.]+ km away\.$")
        nearest = distance_in_metres(note.rsplit("the nearest is", 1)[-1].replace("away.", "").strip())
        self.assertIsNotNone(nearest, note)
        self.assertLessEqual(abs(nearest - answer["temples"][0]["distance_m"]), 0.01 * answer["temples"][0]["distance_m"], note)
        # Thousands of kilometres away: no walking directions (walking.js).
        for item in items:
            self.assertEqual(item.find_elements(By.CSS_SELECTOR, "a.directions"), [])
            self.assertIn("Too far to walk", item.text)
        browser.assert_not_reloaded()


class StudentsTest(PageTest):
    def test_a_friend_who_moves_shows_at_the_new_place_within_two_seconds(self):
        nok, pim = Account("Nok", "Srisuk", "nok"), Account("Pim", "Chaiyo", "pim")
        hall_of_science, library, student_union = (building("csulb-hsci"), building("csulb-lib"),
                                                   building("csulb-usu"))
        seen_by_nok, seen_by_pim = self.browser(), self.browser()
        seen_by_nok.open("/")
        seen_by_pim.open("/")
        seen_by_nok.sign_up(nok)
        seen_by_pim.sign_up(pim)

        # Nok finds Pim and asks; Pim accepts; both lists show the other, without reload.
        seen_by_nok.tab("friends")
        seen_by_nok.fill("#people-search", pim.username)
        seen_by_nok.submit("#people-form")
        found = seen_by_nok.wait(
            lambda driver: [item for item in seen_by_nok.find_all("#people-results li[data-user-id]")
                            if pim.username in item.get_attribute("textContent")],
            f"#people-results lists @{pim.username}")[0]
        pim.id = found.get_attribute("data-user-id")
        seen_by_nok.click(found.find_element(By.CSS_SELECTOR, "button.send-request"))
        seen_by_pim.tab("friends")
        request = seen_by_pim.visible("#friend-requests li[data-request-id]",
                                      "Pim's #friend-requests shows Nok's request without reload")
        self.assertIn("Nok", request.get_attribute("textContent"))
        seen_by_pim.click(request.find_element(By.CSS_SELECTOR, "button.accept-request"))
        nok.id = seen_by_pim.visible("#friends-list li[data-user-id]",
                                     "Pim's #friends-list shows Nok once accepted").get_attribute("data-user-id")
        seen_by_nok.visible(seen_by_nok.friend_item(pim), "Nok's #friends-list shows Pim once Pim accepted, without reload")

        # Both share where they are; Nok sees Pim's pin and label.
        seen_by_nok.set_point(hall_of_science)
        seen_by_nok.share("In the lab")
        library_label = seen_by_pim.set_point(library)
        seen_by_pim.share("Studying")
        seen_by_nok.wait(lambda driver: seen_by_nok.pin_at("friend", pim.id, library),
                         f"Nok's map shows Pim's pin at {library}")
        label = seen_by_nok.friend_item(pim) + " .friend-label"
        seen_by_nok.wait(lambda driver: library_label in seen_by_nok.text(label),
                         lambda: f"Nok's list says Pim is {library_label!r} (it says {seen_by_nok.text_of(label)!r})")

        # Pim moves: the pin on Nok's map follows within two seconds of the moment Pim's share was answered.
        union_label = seen_by_pim.set_point(student_union)
        seen_by_nok.watch_pin("friend", pim.id, student_union)
        answered_at = seen_by_pim.share("Lunch")
        try:
            seen_by_nok.wait(lambda driver: seen_by_nok.js("return window.__vicinityPinAt") is not None,
                             "the pin moves at all", timeout=max(WAIT, 10))
        except AssertionError:
            self.fail(f"Pim's pin on Nok's map never moved to {student_union}; it is at "
                      f"{seen_by_nok.pin_coordinates('friend', pim.id)}")
        moved_ms = seen_by_nok.js("return window.__vicinityPinAt") - answered_at
        measured(f"friend pin moved: {moved_ms:.0f} ms after the mover's share was answered (bound {MOVE_BOUND_MS} ms)")
        self.assertLessEqual(moved_ms, MOVE_BOUND_MS, "Pim's pin moved on Nok's map, but late")
        self.assertEqual(len(seen_by_nok.find_all(seen_by_nok.pin("friend", pim.id))), 1,
                        f"one pin for Pim, at the new place: {seen_by_nok.pin_coordinates('friend', pim.id)}")
        seen_by_nok.wait(lambda driver: union_label in seen_by_nok.text(label),
                         lambda: f"Nok's list says Pim is {union_label!r} after the move (it says {seen_by_nok.text_of(label)!r})")
        seen_by_nok.wait(lambda driver: "Pim" in seen_by_nok.text("#map") and union_label in seen_by_nok.text("#map"),
                         lambda: f"the pin carries 'Pim' and {union_label!r} as its label (the map says {seen_by_nok.text('#map')[:300]!r})")
        seen_by_nok.assert_not_reloaded()
        seen_by_pim.assert_not_reloaded()

    def test_a_vote_opened_by_one_student_is_found_nearby_by_the_other_and_both_see_the_result(self):
        tess = Account("Tess", "Ward", "tess").sign_up_through_api()
        ana = Account("Ana", "Lima", "ana").sign_up_through_api()
        initiator, voter = self.browser(), self.browser()
        initiator.open("/")
        voter.open("/")
        initiator.sign_in(tess)
        voter.sign_in(ana)
        subject, options = f"Lunch after the lab? ({RUN})", ["Pizza", "Tacos"]
        password = "".join(random.choices(string.digits, k=6))

        initiator.set_point(building("csulb-hsci"))
        initiator.tab("votes")
        initiator.fill("#vote-subject", subject)
        initiator.fill("#vote-options", "\n".join(options))
        initiator.fill("#vote-participants", "2")
        initiator.fill("#vote-password", password)
        initiator.select("#vote-duration", "15m")
        initiator.select("#vote-visibility", "public")
        initiator.submit("#vote-open-form")
        vote_id = initiator.wait(lambda driver: VOTE_ID.fullmatch(initiator.text("#vote-created .vote-id"))
                                 and initiator.text("#vote-created .vote-id"),
                                 lambda: f"#vote-created names the new vote (#message says {initiator.message()!r})")
        self.assertIn(f"Vote {vote_id} is open", initiator.text("#vote-created"))

        # The other student, 50 m away, finds it in #votes-nearby and votes with the password.
        voter.set_point(building("csulb-sssc"))
        voter.tab("votes")
        listed = voter.visible(f'#votes-nearby li[data-vote-id="{vote_id}"]', f"#votes-nearby lists vote {vote_id}")
        voter.click(self.button_of(listed))
        self.cast(voter, vote_id, subject, 1, password)
        voter.wait(lambda driver: "You voted for Tacos" in voter.text("#panel-votes"), "the voter is told 'You voted for Tacos'")

        # The initiator opens it by id and casts the last ballot: the vote finishes on both pages.
        initiator.fill("#vote-find-id", vote_id)
        initiator.submit("#vote-find-form")
        self.cast(initiator, vote_id, subject, 1, password)
        for browser, who in ((voter, "the voter"), (initiator, "the initiator")):
            browser.visible("#vote-result", f"#vote-result shows on the page of {who} without reload")
            browser.wait(lambda driver: self.result(browser) == {"Pizza": 0, "Tacos": 2},
                         lambda: f"#vote-result on the page of {who} says Pizza 0, Tacos 2 (it says {self.result(browser)})")
            browser.assert_not_reloaded()

    def test_a_status_written_as_html_is_shown_as_text_and_never_run(self):
        markup = "<img src=x onerror=alert(1)>"
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        pim.befriend_through_api(nok)
        seen_by_nok, seen_by_pim = self.browser(), self.browser()
        seen_by_nok.open("/")
        seen_by_pim.open("/")
        seen_by_nok.sign_in(nok)
        seen_by_pim.sign_in(pim)
        library = building("csulb-lib")
        seen_by_pim.set_point(library)
        seen_by_pim.share(markup)

        seen_by_nok.tab("friends")
        status = seen_by_nok.friend_item(pim) + " .friend-status"
        seen_by_nok.wait(lambda driver: seen_by_nok.text(status) == markup,
                         lambda: f"Nok's list shows Pim's status as typed (it shows {seen_by_nok.text_of(status)!r})")
        seen_by_nok.wait(lambda driver: seen_by_nok.pin_at("friend", pim.id, library), "Pim's pin is on Nok's map")
        self.assertEqual(seen_by_nok.find(status).get_attribute("textContent"), markup)
        self.assertEqual(seen_by_nok.find_all("#friends-list img"), [], "an img element inside #friends-list")
        for browser, whose in ((seen_by_nok, "Nok's"), (seen_by_pim, "Pim's")):
            self.assertEqual(browser.images_outside_leaflet("#map"), [], f"an img element on {whose} map")
            self.assertEqual(browser.js("return [...document.querySelectorAll('img[src=\"x\"], [onerror]')].map(e => e.outerHTML)"),
                             [], f"the status became markup on {whose} page")
            self.assertIsNone(browser.open_dialog(), f"an alert is open on {whose} page")
            probe = browser.js("return window.__vicinityProbe")
            self.assertEqual(probe["dialogs"], [], f"{whose} page opened a dialog")
            self.assertEqual([load for load in probe["failedLoads"] if load.endswith("/x")], [],
                             f"{whose} page tried to load the status's image")

    def test_a_friend_who_hides_leaves_the_other_screen_within_a_second_and_comes_back_as_fast(self):
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        nok.befriend_through_api(pim)
        pim.share_through_api(building("csulb-lib"), "Studying")
        page = self.browser()
        page.open("/")
        page.sign_in(nok)
        page.tab("friends")
        page.wait(lambda driver: page.find_all(page.pin("friend", pim.id)), "Nok's map shows Pim's pin")
        delays = []
        # Ten rounds of privacy mode on and off: twenty changes, each timed from Pim's answer to the DOM change.
        for round_number in range(10):
            for on in (True, False):
                page.watch_pin_presence("friend", pim.id, present=not on)
                api("PATCH", "/v1/me", pim.token, {"privacy_mode": on})
                answered_at = time.time() * 1000
                page.wait(lambda driver: page.js("return window.__vicinityPinChangedAt") is not None,
                          f"Pim's pin {'leaves' if on else 'comes back to'} Nok's map (round {round_number + 1})")
                delays.append(max(0.0, page.js("return window.__vicinityPinChangedAt") - answered_at))
            label = page.friend_item(pim) + " .friend-label"
            self.assertNotIn("Hidden", page.text(label), "the list follows the pin")
        delays.sort()
        p50, p99 = delays[len(delays) // 2], delays[min(len(delays) - 1, int(len(delays) * 0.99))]
        measured(f"hiding to the pin leaving (and back): p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {delays[-1]:.0f} ms "
                 f"over {len(delays)} changes")
        self.assertLessEqual(p50, 1000, f"half the changes reach the other screen within a second: {delays}")
        page.assert_not_reloaded()

    def test_the_initiators_count_and_controls_follow_ballots_as_they_arrive(self):
        tess = Account("Tess", "Ward", "tess").sign_up_through_api()
        ana = Account("Ana", "Lima", "ana").sign_up_through_api()
        vote_id = self.open_vote_through_api(tess, "Lab snacks?", ["Chips", "Fruit"], "482913")
        page = self.browser()
        page.open("/")
        page.sign_in(tess)
        page.tab("votes")
        self.show_vote(page, vote_id)
        page.wait(lambda driver: "0 of 3 voted" in page.text("#vote-detail"), "the vote says 0 of 3 voted")
        page.visible("#vote-edit", "the subject can be changed before the first ballot")
        api("POST", f"/v1/votes/{vote_id}/ballots", ana.token, {"password": "482913", "option": 1})
        page.wait(lambda driver: "1 of 3 voted" in page.text("#vote-detail"),
                  lambda: f"the count moves without a reload (it says {page.text('#vote-detail')[:200]!r})")
        page.wait(lambda driver: not page.find("#vote-edit").is_displayed(),
                  "changing the subject is no longer offered once someone has voted")
        page.assert_not_reloaded()

    def test_a_friend_last_seen_forty_minutes_ago_says_so_in_the_list_and_on_the_pin(self):
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        nok.befriend_through_api(pim)
        # Pim's phone sends a fix it took 40 minutes ago (OwnTracks' `tst`), as a phone catching up does.
        setup = api("POST", "/v1/me/devices", pim.token, {"name": "Pixel", "kind": "owntracks"})["setup"]
        library = building("csulb-lib")
        fix = json.dumps({"_type": "location", "lat": library.lat, "lon": library.lon, "acc": 8, "tid": "P8",
                          "tst": int(time.time()) - 40 * 60}).encode()
        request = urllib.request.Request(setup["url"], data=fix, method="POST")
        request.add_header("Content-Type", "application/json")
        credentials = base64.b64encode(f"{setup['username']}:{setup['password']}".encode()).decode()
        request.add_header("Authorization", f"Basic {credentials}")
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            self.assertEqual(answer.status, 200)
        page = self.browser()
        page.open("/")
        page.sign_in(nok)
        page.tab("friends")
        seen = page.friend_item(pim) + " .friend-seen"
        page.wait(lambda driver: re.search(r"last seen 4[01] min ago", page.text(seen)),
                  lambda: f"the list says how long ago (it says {page.text_of(seen)!r})")
        page.wait(lambda driver: re.search(r"Pim — .*, last seen 4[01] min ago", page.text("#map")),
                  lambda: f"the pin's label says so too (the map says {page.text('#map')[:300]!r})")

    def test_a_vote_opened_nearby_shows_in_the_votes_panel_when_the_student_comes_back_to_it(self):
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        tess = Account("Tess", "Ward", "tess").sign_up_through_api()
        library = building("csulb-lib")
        page = self.browser()
        page.open("/")
        page.sign_in(nok)
        page.set_point(library)
        page.tab("votes")
        page.wait(lambda driver: page.find_all("#votes-nearby li"), "the nearby votes list has been read")
        vote_id = api("POST", "/v1/votes", tess.token, {
            "subject": "Study group tonight?", "options": ["Yes", "No"], "participants": 3, "password": "482913",
            "duration": "15m", "visibility": "public", "lat": library.lat, "lon": library.lon})["id"]
        page.tab("places")
        page.tab("votes")
        page.wait(lambda driver: page.find_all(f"#votes-nearby li[data-vote-id='{vote_id}']"),
                  lambda: f"the vote opened nearby is listed (the list says {page.text('#votes-nearby')[:200]!r})")
        page.assert_not_reloaded()

    def test_a_poke_shows_as_a_visible_notice(self):
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        nok.befriend_through_api(pim)
        poked, poking = self.browser(), self.browser()
        # The one poked signs in first, so that their event stream is open before the poke.
        poked.open("/")
        poked.sign_in(pim)
        poking.open("/")
        poking.sign_in(nok)
        poking.tab("friends")
        poking.click(poking.visible(poking.friend_item(pim) + " button.poke", "Nok's list has a poke button for Pim"))
        notice = poked.wait(lambda driver: [item for item in poked.find_all("#notices li")
                                            if item.is_displayed() and "Nok" in item.text],
                            "a visible notice in #notices says Nok poked")[0]
        self.assertGreater(notice.size["height"], 0)
        self.assertGreater(notice.size["width"], 0)
        poked.assert_not_reloaded()

    def test_a_student_blocks_a_friend_who_can_then_no_longer_find_her_and_unblocks_him_from_search(self):
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        nok.befriend_through_api(pim)
        page = self.browser()
        page.open("/")
        page.sign_in(nok)
        page.tab("friends")
        block = page.visible(page.friend_item(pim) + " button.block-person", "Nok's list has a Block button for Pim")
        page.click(block)
        page.wait(lambda driver: "Click again" in block.text, "the Block button asks once more, in place")
        self.assertEqual(page.find_all("#blocks-list li[data-user-id]"), [], "one click blocks nobody")
        page.click(block)
        page.wait(lambda driver: not page.find_all(page.friend_item(pim)), "Pim leaves Nok's friends list")
        blocked = page.visible(f"#blocks-list li[data-user-id='{pim.id}']", "Nok's blocked list shows Pim")
        self.assertIn("Pim Chaiyo", blocked.text)
        self.assertIn("You blocked Pim Chaiyo", page.message())
        # Pim, told nothing, no longer finds Nok.
        self.assertEqual(api("GET", f"/v1/users?{query(q=nok.username)}", pim.token)["users"], [])

        # Nok finds Pim marked as blocked and unblocks him there.
        page.fill("#people-search", pim.username)
        page.submit("#people-form")
        found = page.visible(f"#people-results li[data-user-id='{pim.id}']", "Nok's search lists Pim")
        self.assertIn("Blocked", found.text)
        page.click(found.find_element(By.CSS_SELECTOR, "button.unblock-person"))
        page.wait(lambda driver: not page.find_all("#blocks-list li[data-user-id]"), "the blocked list empties")
        self.assertEqual([user["id"] for user in api("GET", f"/v1/users?{query(q=nok.username)}", pim.token)["users"]],
                         [nok.id], "Pim finds Nok again")
        page.assert_not_reloaded()

    def test_a_student_shows_a_friend_only_her_building_and_the_friend_sees_the_building_pin(self):
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        nok.befriend_through_api(pim)
        # 0.0003 degrees of latitude (about 33 m) north of Hall of Science's own point: a pin at the exact
        # position sits on no place's point. The building shown is whichever the service finds closest.
        hall_of_science = building("csulb-hsci")
        where = {"lat": hall_of_science.lat + 0.0003, "lon": hall_of_science.lon}
        api("PUT", "/v1/me/position", nok.token, where)
        closest = api("GET", f"/v1/places/closest?{query(**where)}")["place"]
        shown = Place({"id": closest["id"], "name": closest["name"], "lat": str(closest["lat"]), "lon": str(closest["lon"])})
        sharer = self.browser()
        sharer.open("/")
        sharer.sign_in(nok)
        sharer.tab("friends")
        sharer.select(sharer.friend_item(pim) + " select.share-for", "3600")
        sharer.select(sharer.friend_item(pim) + " select.share-with", "building")
        sharer.wait(lambda driver: "now sees: Only the building I am at until" in sharer.message(),
                    lambda: f"the page confirms the level and its end (it says {sharer.message()!r})")
        self.assertIn("until", sharer.text(sharer.friend_item(pim) + " .share-until"))
        self.assertIsNotNone(api("GET", f"/v1/friends/{pim.id}", nok.token)["share_until"], "for an hour")
        seen = api("GET", f"/v1/friends/{nok.id}", pim.token)
        self.assertEqual((seen["precision"], seen["position"]["lat"], seen["position"]["lon"]),
                         ("building", shown.lat, shown.lon))

        # Pim's page shows Nok at the building's point, and says the list shows a building only.
        friend = self.browser()
        friend.open("/")
        friend.sign_in(pim)
        friend.tab("friends")
        label = friend.friend_item(nok) + " .friend-label"
        friend.wait(lambda driver: "(building only)" in friend.text(label),
                    lambda: f"Pim's list says Nok is shown by building (it says {friend.text_of(label)!r})")
        friend.wait(lambda driver: friend.pin_at("friend", nok.id, shown),
                    lambda: f"Nok's pin is at {shown}, not at {friend.pin_coordinates('friend', nok.id)}")


class TeacherTest(PageTest):
    """The initiator's controls: settling ballots cast under the same name, closing, extending, editing and
    calling off a vote, all through the page."""

    def test_a_teacher_voids_one_of_two_ballots_cast_under_the_same_name_and_both_students_see_the_result(self):
        teacher = Account("Kanya", "Boonmee", "teacher").sign_up_through_api()
        # Two students whose names read the same, under different usernames.
        first = Account("Mai", "Tran", "mai").sign_up_through_api()
        second = Account("Mai", "Tran", "mai").sign_up_through_api()
        seen_by_teacher, seen_by_first, seen_by_second = self.browser(), self.browser(), self.browser()
        for browser, account in ((seen_by_teacher, teacher), (seen_by_first, first), (seen_by_second, second)):
            browser.open("/")
            browser.sign_in(account)
        subject, options = f"Which lab first? ({RUN})", ["Optics", "Circuits"]
        password = "".join(random.choices(string.digits, k=6))

        vote_id = self.open_vote_through_the_page(seen_by_teacher, subject, options, 2, password)
        seen_by_teacher.visible("#vote-admin", "the teacher's controls show on the vote just opened")
        for css in ("#vote-close", "#vote-cancel", "#vote-extend-form", "#vote-edit"):
            self.assertTrue(seen_by_teacher.find(css).is_displayed(), f"{css} shows on an open vote of the teacher's")
        self.assertFalse(seen_by_teacher.find("#vote-settling").is_displayed(), "an open vote is not settling")

        # Each student opens the vote by its id and votes: the first for Optics, the second for Circuits.
        for browser, option in ((seen_by_first, 0), (seen_by_second, 1)):
            browser.tab("votes")
            browser.fill("#vote-find-id", vote_id)
            browser.submit("#vote-find-form")
            self.cast(browser, vote_id, subject, option, password)
            browser.wait(lambda driver: f"You voted for {options[option]}" in browser.text("#vote-detail .vote-ballot"),
                         lambda: f"the student is told 'You voted for {options[option]}' (#message says {browser.message()!r})")
            self.assertFalse(browser.find("#vote-admin").is_displayed(), "a student gets no initiator's controls")

        # The second ballot ends voting with two ballots under one name: the vote settles, and the one who cast
        # it is told why no result shows yet.
        seen_by_second.wait(lambda driver: seen_by_second.text("#vote-detail .vote-state") == "settling",
                            lambda: f"the second student's page shows the vote settling (it says {seen_by_second.text('#vote-detail .vote-state')!r})")
        self.assertIn("The initiator is checking ballots cast under the same name; the result comes by",
                      seen_by_second.text("#vote-detail .vote-status"))
        self.assertFalse(seen_by_second.find("#vote-result").is_displayed(), "no result while the vote settles")

        # The teacher's page, told by the vote_conflict event, shows the vote settling with both ballots.
        ballots = "#vote-conflicts li.ballot"
        seen_by_teacher.wait(lambda driver: seen_by_teacher.find("#vote-settling").is_displayed()
                             and len(seen_by_teacher.find_all(ballots)) == 2,
                             lambda: f"the teacher's page lists the two ballots under the same name without reload "
                                     f"(#vote-detail says {seen_by_teacher.text('#vote-detail')[:400]!r})")
        self.assertEqual(seen_by_teacher.text("#vote-detail .vote-state"), "settling")
        self.assertIn("Settling until", seen_by_teacher.text("#vote-settling .settling-until"))
        self.assertIn("Mai Tran", seen_by_teacher.text("#vote-conflicts .conflict-name"))
        listed = {item.get_attribute("data-username"): seen_by_teacher.text(item) for item in seen_by_teacher.find_all(ballots)}
        self.assertEqual(set(listed), {first.username, second.username})
        for username, text in listed.items():
            self.assertIn(f"@{username}", text)
            self.assertIn("counted", text)
            self.assertRegex(text, r"account .+ old \(made .+\), voted at ")
        for css in ("#vote-close", "#vote-extend-form", "#vote-edit"):
            self.assertFalse(seen_by_teacher.find(css).is_displayed(), f"{css} is gone once voting has ended")
        notice = seen_by_teacher.wait(lambda driver: [item for item in seen_by_teacher.find_all("#notices li.notice-vote_conflict")
                                                      if vote_id in item.text],
                                      "a notice tells the teacher of the ballots under the same name")[0]
        self.assertIn("Mai Tran (2 ballots)", notice.text)

        # The teacher voids the first student's ballot; the last counted ballot of the name cannot be voided,
        # and the server's reason shows under the ballots (the list drawn again has replaced the button pressed).
        first_ballot = f'{ballots}[data-username="{first.username}"]'
        second_ballot = f'{ballots}[data-username="{second.username}"]'
        seen_by_teacher.click(f"{first_ballot} button.ballot-toggle")
        seen_by_teacher.wait(lambda driver: "voided" in seen_by_teacher.find(first_ballot).get_attribute("class")
                             and seen_by_teacher.text(f"{first_ballot} button.ballot-toggle") == "Restore",
                             lambda: f"the first ballot shows voided (#message says {seen_by_teacher.message()!r})")
        seen_by_teacher.click(f"{second_ballot} button.ballot-toggle")
        refusal = "#vote-settling .action-error"
        seen_by_teacher.wait(lambda driver: "last counted ballot" in (seen_by_teacher.text_of(refusal) or ""),
                             lambda: f"the server's reason shows under the ballots (it says {seen_by_teacher.text_of(refusal)!r}, "
                                     f"#message {seen_by_teacher.message()!r})")
        self.assertIn("counted", seen_by_teacher.find(second_ballot).get_attribute("class"))

        # The teacher publishes: every page shows the result, with one ballot voided by the initiator.
        seen_by_teacher.click("#vote-publish")
        for browser, who in ((seen_by_teacher, "the teacher"), (seen_by_first, "the first student"),
                             (seen_by_second, "the second student")):
            browser.visible("#vote-result", f"#vote-result shows on the page of {who} without reload")
            browser.wait(lambda driver: self.result(browser) == {"Optics": 0, "Circuits": 1}
                         and browser.text("#vote-detail .vote-state") == "finished",
                         lambda: f"#vote-result on the page of {who} says Optics 0, Circuits 1 (it says {self.result(browser)})")
            summary = browser.text("#vote-result .result-summary")
            self.assertIn("1 of 2 ballots counted; 1 ballot voided", summary, who)
            self.assertIn("checked by the initiator", browser.text("#vote-result .result-settlement"), who)
            self.assertFalse(browser.find("#vote-admin").is_displayed(), f"no controls on a finished vote ({who})")
            browser.assert_not_reloaded()
        self.assertIn("The initiator voided this ballot", seen_by_first.text("#vote-detail .vote-ballot"))
        self.assertNotIn("voided", seen_by_second.text("#vote-detail .vote-ballot"))
        for browser, who in ((seen_by_teacher, "the teacher"), (seen_by_first, "the first student"),
                             (seen_by_second, "the second student")):
            self.assert_no_script_trouble(browser, who)

    def test_a_teacher_edits_extends_and_closes_one_vote_and_calls_off_another(self):
        teacher = Account("Kanya", "Boonmee", "teacher").sign_up_through_api()
        student = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        # Opened elsewhere (the API): the page learns from the teacher's history that the teacher opened them.
        password = "".join(random.choices(string.digits, k=6))
        closing = self.open_vote_through_api(teacher, f"Quiz on Friday? ({RUN})", ["Yes", "No"], password)
        calling_off = self.open_vote_through_api(teacher, f"Field trip? ({RUN})", ["Zoo", "Museum"], password)
        page = self.browser()
        page.open("/")
        page.sign_in(teacher)
        page.tab("votes")

        # Before anyone votes, the teacher changes what the vote asks, then gives it 15 minutes more.
        self.show_vote(page, closing)
        page.visible("#vote-admin", "the teacher's controls show on a vote the teacher opened elsewhere")
        page.click("#vote-edit summary")
        subject = f"Quiz on Monday? ({RUN})"
        page.fill("#vote-edit-subject", subject)
        page.fill("#vote-edit-options", "Yes\nNo\nLater")
        page.submit("#vote-edit-form")
        page.wait(lambda driver: page.text("#vote-detail .vote-subject") == subject
                  and len(page.find_all('#vote-detail input[name="vote-option"]')) == 3,
                  lambda: f"the vote shows the new subject and three options (#message says {page.message()!r})")
        page.select("#vote-extend-duration", "15m")
        page.submit("#vote-extend-form")
        page.wait(lambda driver: "(extended by 15 min)" in page.text("#vote-detail .vote-where"),
                  lambda: f"the vote says it was extended (it says {page.text('#vote-detail .vote-where')!r}, "
                          f"#message {page.message()!r})")
        self.assertFalse(page.find("#vote-extend-form").is_displayed(), "a vote is extended only once")

        # A student votes (through the API); the teacher closes the vote, which finishes at once.
        api("POST", f"/v1/votes/{closing}/ballots", student.token,
            {"password": password, "option": 2})
        page.click("#vote-close")
        page.wait(lambda driver: page.text("#vote-detail .vote-state") == "finished",
                  lambda: f"the closed vote shows finished (#message says {page.message()!r})")
        self.assertIn("finished because the initiator closed it", page.text("#vote-detail .vote-progress"))
        page.visible("#vote-result", "the closed vote's result shows")
        page.wait(lambda driver: self.result(page) == {"Yes": 0, "No": 0, "Later": 1},
                  lambda: f"#vote-result says Yes 0, No 0, Later 1 (it says {self.result(page)})")
        self.assertNotIn("voided", page.text("#vote-result .result-summary"))
        self.assertFalse(page.find("#vote-admin").is_displayed(), "no controls on a finished vote")

        # Calling off asks first, in the page: "Keep it" leaves the vote open, "Yes, call it off" ends it.
        self.show_vote(page, calling_off)
        page.visible("#vote-admin", "the teacher's controls show on the other vote")
        page.click("#vote-cancel")
        page.visible("#vote-cancel-confirm", "calling off asks to confirm")
        self.assertEqual(page.text("#vote-detail .vote-state"), "open", "one press does not call the vote off")
        page.click("#vote-cancel-no")
        page.wait(lambda driver: not page.find("#vote-cancel-confirm").is_displayed(), "'Keep it' puts the question away")
        self.assertEqual(page.text("#vote-detail .vote-state"), "open")
        page.click("#vote-cancel")
        page.click(page.visible("#vote-cancel-yes"))
        page.wait(lambda driver: page.text("#vote-detail .vote-state") == "called off",
                  lambda: f"the vote shows called off (#message says {page.message()!r})")
        self.assertIn("Called off by the initiator", page.text("#vote-detail .vote-status"))
        self.assertFalse(page.find("#ballot-form").is_displayed(), "a called-off vote takes no ballots")
        self.assertFalse(page.find("#vote-admin").is_displayed(), "no controls on a called-off vote")
        page.wait(lambda driver: [item for item in page.find_all("#notices li.notice-vote_cancelled") if calling_off in item.text],
                  "a notice says the vote was called off")
        page.assert_not_reloaded()
        self.assert_no_script_trouble(page, "the teacher")

    # Helpers

    def open_vote_through_the_page(self, browser, subject, options, participants, password):
        browser.set_point(building("csulb-hsci"))
        browser.tab("votes")
        browser.fill("#vote-subject", subject)
        browser.fill("#vote-options", "\n".join(options))
        browser.fill("#vote-participants", str(participants))
        browser.fill("#vote-password", password)
        browser.select("#vote-duration", "15m")
        browser.select("#vote-visibility", "public")
        browser.submit("#vote-open-form")
        vote_id = browser.wait(lambda driver: VOTE_ID.fullmatch(browser.text("#vote-created .vote-id"))
                               and browser.text("#vote-created .vote-id"),
                               lambda: f"#vote-created names the new vote (#message says {browser.message()!r})")
        browser.wait(lambda driver: browser.find("#vote-detail").get_attribute("data-vote-id") == vote_id,
                     f"#vote-detail shows vote {vote_id}")
        return vote_id

    def assert_no_script_trouble(self, browser, who):
        probe = browser.js("return window.__vicinityProbe")
        self.assertEqual(probe["csp"], [], f"CSP violations on the page of {who}")
        self.assertEqual(probe["errors"], [], f"script errors on the page of {who}")
        self.assertEqual(probe["dialogs"], [], f"the page of {who} opened a browser dialog")


class PhoneTest(PageTest):
    def test_a_student_who_mistypes_the_vote_password_on_a_phone_sees_the_tries_left_beside_the_password(self):
        teacher = Account("Kanya", "Boonmee", "teacher").sign_up_through_api()
        student = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        password = "".join(random.choices(string.digits, k=6))
        wrong = f"{(int(password) + 1) % 1_000_000:06d}"
        vote_id = self.open_vote_through_api(teacher, f"Quiz on Friday? ({RUN})", ["Yes", "No"], password)
        phone = self.browser(375, 812, mobile=True)
        phone.open("/")
        phone.sign_in(student)
        phone.tab("votes")
        self.show_vote(phone, vote_id)

        for left in (4, 3):
            self.cast(phone, vote_id, f"Quiz on Friday? ({RUN})", 0, wrong)
            said = f"The password of this vote is wrong: {left} tries left."
            note = phone.wait(lambda driver: said in phone.text("#ballot-password-error") and phone.find("#ballot-password-error"),
                              lambda: f"#ballot-password-error says {said!r} (it says {phone.text('#ballot-password-error')!r}, "
                                      f"#message {phone.message()!r})")
            # Beside the password, and on the phone's screen without scrolling: the message line at the top of
            # the page is out of view down at the ballot.
            boxes = phone.js("""
                const [note, field] = arguments;
                const box = (element) => { const r = element.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
                return {note: box(note), field: box(field), width: innerWidth, height: innerHeight};""",
                note, phone.find("#ballot-password"))
            self.assertGreaterEqual(boxes["note"]["top"], 0, boxes)
            self.assertLessEqual(boxes["note"]["bottom"], boxes["height"], boxes)
            self.assertGreaterEqual(boxes["note"]["left"], 0, boxes)
            self.assertLessEqual(boxes["note"]["right"], boxes["width"], boxes)
            gap = boxes["note"]["top"] - boxes["field"]["bottom"]
            self.assertTrue(0 <= gap <= 24, f"the tries left are {gap} px below the password field: {boxes}")
            self.assertEqual(phone.find("#ballot-password").get_attribute("aria-invalid"), "true")
            self.assertEqual(phone.message(), "", "the tries left are said once, beside the password")

        # The right password still counts while tries are left.
        self.cast(phone, vote_id, f"Quiz on Friday? ({RUN})", 1, password)
        phone.wait(lambda driver: "You voted for No" in phone.text("#vote-detail .vote-ballot"),
                   lambda: f"the student is told 'You voted for No' (#message says {phone.message()!r})")
        self.assertEqual(phone.text("#ballot-password-error"), "", "nothing is left of the wrong tries")
        phone.assert_not_reloaded()

    def test_the_page_fits_a_375_px_phone_without_horizontal_scroll_and_shows_the_map(self):
        account = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        phone = self.browser(375, 812, mobile=True)
        phone.open("/")
        self.assertEqual(phone.js("return [window.innerWidth, window.innerHeight]"), [375, 812])
        self.assert_fits(phone, "a guest on the places tab")
        phone.sign_in(account)
        phone.set_point(building("csulb-hsci"))
        for name in ("places", "friends", "votes", "account"):
            phone.tab(name)
            self.assert_fits(phone, f"signed in, on the {name} tab")

    def assert_fits(self, phone, where):
        width = phone.js("return document.documentElement.scrollWidth")
        self.assertLessEqual(width, 375, f"{where}: the page scrolls sideways ({width} px wide)")
        map_element = phone.find("#map")
        self.assertTrue(map_element.is_displayed(), f"{where}: #map is hidden")
        self.assertIn("leaflet-container", map_element.get_attribute("class"), f"{where}: #map is not a Leaflet map")
        box = phone.js("const box = arguments[0].getBoundingClientRect();"
                       "return {top: box.top + scrollY, left: box.left, right: box.right, height: box.height}", map_element)
        self.assertGreaterEqual(box["left"], 0, where)
        self.assertLessEqual(box["right"], 375, where)
        self.assertGreaterEqual(box["height"], 200, f"{where}: the map is {box['height']} px high")
        self.assertLess(box["top"], 812 - 200, f"{where}: the map is not on the first screen")


class OutputsTest(PageTest):
    def test_page_weight_and_time_to_first_map_are_measured(self):
        browser = self.browser()
        browser.open("/")
        try:
            first_map = browser.wait(lambda driver: browser.js(
                "const marks = performance.getEntriesByName('vicinity-first-map'); return marks.length ? marks[0].startTime : null"),
                "the page marks 'vicinity-first-map'")
        except AssertionError:
            first_map = None
        # Until no request has been added for a second (at most WAIT), so that late files count too.
        count, settled_at, deadline = -1, time.monotonic(), time.monotonic() + WAIT
        while time.monotonic() < deadline and time.monotonic() - settled_at < 1:
            now = browser.js("return performance.getEntriesByType('resource').length")
            if now != count:
                count, settled_at = now, time.monotonic()
            time.sleep(0.1)
        entries = browser.js("""
            return [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
                .map(entry => ({name: entry.name, transfer: entry.transferSize || 0, encoded: entry.encodedBodySize || 0}));""")
        groups = {"page files": [], "Leaflet": [], "API answers": [], "elsewhere (tiles)": []}
        for entry in entries:
            if not entry["name"].startswith(SERVER):
                groups["elsewhere (tiles)"].append(entry)
                continue
            path = entry["name"][len(SERVER):].split("?")[0] or "/"
            groups["Leaflet" if path.startswith("/leaflet/") else
                   "API answers" if path.startswith("/v1/") or path == "/health" else "page files"].append(entry)

        def kib(group, field):
            return sum(entry[field] for entry in groups[group]) / 1024

        page = kib("page files", "transfer") + kib("Leaflet", "transfer")
        measured(f"page weight: {page:.1f} KiB transferred on a first visit "
                 f"(page files {kib('page files', 'transfer'):.1f} KiB in {len(groups['page files'])} files, "
                 f"{kib('page files', 'encoded'):.1f} KiB of bodies; "
                 f"Leaflet {kib('Leaflet', 'transfer'):.1f} KiB in {len(groups['Leaflet'])} files, "
                 f"{kib('Leaflet', 'encoded'):.1f} KiB of bodies); "
                 f"besides, API answers {kib('API answers', 'transfer'):.1f} KiB in {len(groups['API answers'])}, "
                 f"{len(groups['elsewhere (tiles)'])} requests elsewhere")
        if first_map is None:
            measured(f"time to first map: not measured, the page made no mark 'vicinity-first-map' within {WAIT:g} s")
        else:
            measured(f"time to first map: {first_map:.0f} ms from navigation start (mark 'vicinity-first-map')")

    def test_screenshots_show_a_signed_in_student_with_a_friend_and_places(self):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim = Account("พิมพ์", "ใจดี", "pim").sign_up_through_api()
        pim.befriend_through_api(nok)
        library = building("csulb-lib")
        pim.share_through_api(library, "อ่านหนังสือ (reading)")
        for width, height, mobile in ((1280, 800, False), (375, 812, True)):
            browser = self.browser(width, height, mobile)
            browser.open("/")
            browser.sign_in(nok)
            browser.set_point(building("csulb-hsci"))
            browser.share("In the lab")
            browser.tab("friends")
            browser.visible(browser.friend_item(pim), "the friend is listed")
            browser.wait(lambda driver: browser.pin_at("friend", pim.id, library), "the friend's pin is on the map")
            browser.wait(lambda driver: browser.find_all('#map [data-kind="place"]'), "places are on the map")
            browser.wait(lambda driver: not browser.find_all(".leaflet-zoom-anim, .leaflet-pan-anim"), "the map is still")
            browser.js("window.scrollTo(0, 0)")
            time.sleep(0.5)  # CSS fades end before the picture is taken
            path = SCREENSHOTS / f"map-{width}x{height}.png"
            self.assertTrue(browser.driver.save_screenshot(str(path)), f"no screenshot written to {path}")
            self.assertEqual(png_size(path), (width, height), f"{path} is not {width}x{height}")
            measured(f"screenshot: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({width}x{height})")
            browser.close()


class LogTest(PageTest):
    def test_the_browser_logged_no_csp_violation_or_script_error_during_the_flows(self):
        if not BROWSER_LOG:
            self.skipTest("no browser session ran before this test")
        problems, refused = [], collections.Counter()
        for session in BROWSER_LOG:
            for entry in session["problems"]:
                problems.append(f"{session['test']}: {entry['level']} {entry.get('source')}: {entry['message']}")
            for entry in session["entries"]:
                failed = re.match(r"(\S+) - Failed to load resource: .*status of (\d+)", entry["message"])
                if entry.get("source") == "network" and failed:
                    refused[f"{failed.group(2)} {urllib.parse.urlparse(failed.group(1)).path}"] += 1
            for kind in ("csp", "errors", "dialogs"):
                for text in session["probe"].get(kind, []):
                    problems.append(f"{session['test']}: {kind}: {text}")
        measured(f"browser logs: {len(BROWSER_LOG)} sessions, {sum(len(s['entries']) for s in BROWSER_LOG)} entries, "
                 f"{len(problems)} problems; refused requests (not counted as problems when to the API): "
                 + (", ".join(f"{line} x{count}" for line, count in sorted(refused.items())) or "none"))
        self.assertEqual(problems, [], "CSP violations or script errors in the browser")


ORDER = [
    "test_the_page_is_served_with_a_content_security_policy_without_unsafe_inline",
    "test_the_page_html_has_no_inline_script_style_or_event_handler",
    "test_a_guest_finds_wat_pho_and_gets_temples_with_distances_and_directions_links",
    "test_a_guest_with_no_temple_nearby_is_told_how_far_the_nearest_one_is",
    "test_a_friend_who_moves_shows_at_the_new_place_within_two_seconds",
    "test_a_vote_opened_by_one_student_is_found_nearby_by_the_other_and_both_see_the_result",
    "test_a_teacher_voids_one_of_two_ballots_cast_under_the_same_name_and_both_students_see_the_result",
    "test_a_teacher_edits_extends_and_closes_one_vote_and_calls_off_another",
    "test_a_status_written_as_html_is_shown_as_text_and_never_run",
    "test_a_poke_shows_as_a_visible_notice",
    "test_a_student_who_mistypes_the_vote_password_on_a_phone_sees_the_tries_left_beside_the_password",
    "test_the_page_fits_a_375_px_phone_without_horizontal_scroll_and_shows_the_map",
    "test_page_weight_and_time_to_first_map_are_measured",
    "test_screenshots_show_a_signed_in_student_with_a_friend_and_places",
    "test_the_browser_logged_no_csp_violation_or_script_error_during_the_flows",
]


def load_tests(loader, tests, pattern):
    """The tests in ORDER (the log test last, after every session has ended), whatever -k kept."""
    def flatten(suite):
        for test in suite:
            yield from flatten(test) if isinstance(test, unittest.TestSuite) else [test]
    found = {test.id().rsplit(".", 1)[-1]: test for test in flatten(tests)}
    ordered = unittest.TestSuite()
    # A test not named in ORDER runs with the flows, before the measurements and the log check.
    tail = ORDER[ORDER.index("test_page_weight_and_time_to_first_map_are_measured"):]
    names = [name for name in ORDER if name not in tail] + sorted(set(found) - set(ORDER)) + tail
    for name in names:
        if name in found:
            ordered.addTest(found[name])
    return ordered


if __name__ == "__main__":
    unittest.main()
