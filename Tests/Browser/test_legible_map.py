"""A map one can read, at both sizes it is checked at, a 1280x800 desktop and a 375x812 phone: labels of every
layer (one's own, friends, votes, temples, places) never overlap one another, never run off the map and are
never covered by a pin; a friend 14 m away, a vote opened where its initiator stands and temples on their own
places stay in sight; the chosen point is a ring, not one more dot; and where places carry footprints the map
without tiles draws them.

What the page draws is read back from the browser (getBoundingClientRect, and elementFromPoint with every pin
made hit-testable, so that it answers what is painted on top). Every coordinate comes from Data/*.csv or from
the footprint fixture Scripts/check/browser.sh loads, save the friend 14 m east of the Hall of Science, whom
the test places there by computing the offset. Scripts/check/browser.sh runs these before test_map_page.py,
whose last test checks every session's log for CSP violations and script errors.
"""

import json
import math
import random
import string
import time
import unittest

from vicinity_browser import (ROOT, RUN, SIZES, WAIT, Account, Browser, Measurements, Place, api, building,
                              distance_in_metres, require_server, size_name, temple_named)

# The friend the issue names: 14 m from one's own position, about 7 px apart at the map's opening zoom.
FRIEND_DISTANCE_M = 14
# The sphere the service measures on (GeoCore's mean Earth radius), so that the page says the same 14 m.
EARTH_RADIUS_M = 6371008.8
# A box edge and another may meet within this much without counting as overlapping (sub-pixel rounding).
TOUCH_PX = 0.5
# The footprints Scripts/check/browser.sh loads beside the shipped data (OpenStreetMap, via Data/README.md).
FOOTPRINTS = ROOT / "Tests" / "VicinityImportTests" / "Fixtures" / "ucsb-buildings-osm.geojson"
FOOTPRINTED_BUILDING = "Phelps Hall"
# Enough of a campus's names must stay on the map for it to be read at all: hiding every label would also
# keep them apart.
LEAST_PLACE_LABELS = 5
# Around Wat Pho, more temples than Wat Pho itself must stay named, for the same reason.
LEAST_TEMPLE_LABELS = 2

measured = Measurements()


def setUpModule():
    require_server()


def tearDownModule():
    measured.report()


def east_of(place, metres):
    """The point `metres` due east of `place`, on the service's sphere."""
    lon = place.lon + math.degrees(metres / (EARTH_RADIUS_M * math.cos(math.radians(place.lat))))
    return Place({"id": f"{place.id}-east", "name": f"{metres} m east of {place.name}",
                  "lat": place.lat_text, "lon": f"{lon:.7f}"})


# What the map shows: every pin's dot and which pin is painted at its centre, every visible label's box and
# what is painted over it, and the map's frame. Every pin is made hit-testable while it reads (pins without a
# click are not), so that elementFromPoint answers what is on top, then put back.
READ_MAP = """
const map = document.getElementById('map');
const plain = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height});
const frame = map.getBoundingClientRect();
const nodes = [...map.querySelectorAll('.leaflet-marker-pane .pin, .leaflet-marker-pane .pin *')];
const before = nodes.map((node) => node.style.pointerEvents);
for (const node of nodes) node.style.pointerEvents = 'auto';
const owner = (node) => node && node.closest ? node.closest('.pin') : null;
const what = (node) => owner(node) ? owner(node).dataset.kind + ' ' + owner(node).dataset.id : (node ? node.tagName + '.' + node.className : 'nothing');
const dots = [], labels = [];
for (const pin of map.querySelectorAll('.leaflet-marker-pane .pin')) {
  const dot = pin.querySelector('.pin-dot');
  const box = dot.getBoundingClientRect();
  const [x, y] = [(box.left + box.right) / 2, (box.top + box.bottom) / 2];
  const inView = x > frame.left && x < frame.right && y > frame.top && y < frame.bottom
                 && x > 0 && x < innerWidth && y > 0 && y < innerHeight;
  const top = inView ? document.elementFromPoint(x, y) : null;
  const style = getComputedStyle(dot);
  dots.push({kind: pin.dataset.kind, id: pin.dataset.id, box: plain(box), inView, onTop: inView && owner(top) === pin,
             top: inView ? what(top) : null, background: style.backgroundColor, shape: style.borderRadius});
  const label = pin.querySelector('.pin-label');
  if (!label || getComputedStyle(label).visibility !== 'visible') continue;
  const l = label.getBoundingClientRect();
  const inset = 2;
  const probes = [[l.left + inset, l.top + inset], [l.right - inset, l.top + inset], [l.left + inset, l.bottom - inset],
                  [l.right - inset, l.bottom - inset], [(l.left + l.right) / 2, (l.top + l.bottom) / 2]];
  const covers = probes.map(([px, py]) => document.elementFromPoint(px, py))
                       .filter((node) => node !== label && !label.contains(node)).map(what);
  labels.push({kind: pin.dataset.kind, id: pin.dataset.id, text: label.textContent, box: plain(l), covers});
}
nodes.forEach((node, index) => { node.style.pointerEvents = before[index]; });
return {frame: plain(frame), dots, labels, footprints: map.querySelectorAll('path.footprint').length,
        noTiles: map.classList.contains('no-tiles')};
"""


def overlap(a, b):
    return (a["left"] < b["right"] - TOUCH_PX and b["left"] < a["right"] - TOUCH_PX
            and a["top"] < b["bottom"] - TOUCH_PX and b["top"] < a["bottom"] - TOUCH_PX)


class LegibleMapTest(unittest.TestCase):
    maxDiff = None

    def browser(self, width=1280, height=800, mobile=False):
        browser = Browser(self, width, height, mobile)
        self.addCleanup(browser.close)
        return browser

    def settled_map(self, page, ready, what):
        """The map as READ_MAP reads it once `ready(shown)` holds and two readings 0.3 s apart agree (places
        are read again after every move, and labels placed on the next frame)."""
        page.js("window.scrollTo(0, 0)")
        last = {}

        def settled(driver):
            if page.find_all(".leaflet-zoom-anim, .leaflet-pan-anim"):
                return None
            shown = page.js(READ_MAP)
            agreed = shown == last.get("shown") and ready(shown)
            last["shown"] = shown
            time.sleep(0.3)
            return agreed and shown
        return page.wait(settled, lambda: f"the map shows {what} and stays still (it shows "
                                          f"{sorted((d['kind'], d['id']) for d in last.get('shown', {}).get('dots', []) if d['inView'])})")

    def assert_readable(self, shown, where, kind="place", least=LEAST_PLACE_LABELS):
        """Every visible label inside the map, apart from every other and uncovered; every pin that must stay in
        sight on top at its centre; and at least `least` names of pins of `kind` left to read the map by."""
        frame, labels = shown["frame"], shown["labels"]
        for label in labels:
            box = label["box"]
            self.assertTrue(frame["left"] - TOUCH_PX <= box["left"] and box["right"] <= frame["right"] + TOUCH_PX
                            and frame["top"] - TOUCH_PX <= box["top"] and box["bottom"] <= frame["bottom"] + TOUCH_PX,
                            f"{where}: the label {label['text']!r} runs off the map: {box} in {frame}")
            self.assertEqual(label["covers"], [], f"{where}: something is drawn over the label {label['text']!r}")
        for index, label in enumerate(labels):
            for other in labels[index + 1:]:
                self.assertFalse(overlap(label["box"], other["box"]),
                                 f"{where}: the labels {label['text']!r} and {other['text']!r} overlap: "
                                 f"{label['box']} and {other['box']}")
        for dot in shown["dots"]:
            if dot["inView"] and dot["kind"] in ("me", "friend", "vote", "temple"):
                self.assertTrue(dot["onTop"], f"{where}: the {dot['kind']} pin {dot['id']} is covered by {dot['top']}")
        named = sum(1 for label in labels if label["kind"] == kind)
        self.assertGreaterEqual(named, least, f"{where}: only {named} pins of kind {kind} are named")
        return named

    def dot(self, shown, kind, element_id):
        found = [dot for dot in shown["dots"] if dot["kind"] == kind and dot["id"] == element_id]
        self.assertEqual(len(found), 1, f"one {kind} pin {element_id} on the map: {found}")
        return found[0]

    def label(self, shown, kind, element_id):
        found = [label for label in shown["labels"] if label["kind"] == kind and label["id"] == element_id]
        self.assertEqual(len(found), 1, f"the {kind} pin {element_id} is named on the map")
        return found[0]

    def test_ones_own_label_a_friend_14_m_away_and_a_vote_where_one_stands_all_stay_in_sight(self):
        hall_of_science = building("csulb-hsci")
        beside = east_of(hall_of_science, FRIEND_DISTANCE_M)
        for width, height, mobile in SIZES:
            where = size_name(width, height)
            with self.subTest(size=where):
                nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
                chai = Account("Chai", "Wong", "chai").sign_up_through_api()
                pim = Account("Pim", "Jaidee", "pim").sign_up_through_api()
                for friend, place in ((chai, beside), (pim, building("csulb-lib"))):
                    friend.befriend_through_api(nok)
                    friend.share_through_api(place, "here")
                vote_id = api("POST", "/v1/votes", nok.token, {
                    "subject": f"Coffee break? ({RUN})", "options": ["Yes", "No"], "participants": 3,
                    "password": "".join(random.choices(string.digits, k=6)), "duration": "15m",
                    "visibility": "public", "lat": hall_of_science.lat, "lon": hall_of_science.lon})["id"]
                # Called off at the end of each size, whatever it finds: a vote left for the next size would stand
                # on the same spot as that size's own, and one pin would cover the other; nor should later pages (the
                # screenshots) show it.
                try:
                    page = self.browser(width, height, mobile)
                    page.open("/")
                    page.sign_in(nok)
                    page.set_point(hall_of_science)
                    page.share("In the lab")
                    page.tab("friends")
                    item = page.visible(page.friend_item(chai), "the friend 14 m away is listed")
                    page.wait(lambda driver: distance_in_metres(page.text(item)) == FRIEND_DISTANCE_M,
                              lambda: f"the friends list says {FRIEND_DISTANCE_M} m for Chai (it says {page.text(item)!r})")

                    def all_drawn(shown):
                        kinds = {(dot["kind"], dot["id"]) for dot in shown["dots"] if dot["inView"]}
                        return {("me", nok.id), ("friend", chai.id), ("vote", vote_id), ("point", "point")} <= kinds \
                            and any(kind == "place" for kind, _ in kinds)
                    shown = self.settled_map(page, all_drawn, "one's own pin, the friend's, the vote's, the point and places")
                    places = self.assert_readable(shown, where)

                    me, friend, vote = self.dot(shown, "me", nok.id), self.dot(shown, "friend", chai.id), self.dot(shown, "vote", vote_id)
                    own_label, friend_label = self.label(shown, "me", nok.id), self.label(shown, "friend", chai.id)
                    for name, box in (("one's own pin", me["box"]), ("one's own label", own_label["box"])):
                        self.assertFalse(overlap(box, friend["box"]), f"{where}: {name} covers the friend 14 m away")
                        self.assertFalse(overlap(box, friend_label["box"]), f"{where}: {name} covers the friend's label")
                    self.assertFalse(overlap(friend_label["box"], me["box"]), f"{where}: the friend's label covers one's own pin")
                    self.assertTrue(friend["box"]["left"] >= me["box"]["left"],
                                    f"{where}: the friend east of one is drawn to the east: {friend['box']} against {me['box']}")
                    self.assertFalse(overlap(vote["box"], me["box"]), f"{where}: the vote's pin is under its initiator's")

                    # The chosen point (where one stands too) is a hollow ring round one's own dot, not a place's dot.
                    point = self.dot(shown, "point", "point")
                    place = next(dot for dot in shown["dots"] if dot["kind"] == "place")
                    self.assertGreaterEqual(point["box"]["width"], 2 * place["box"]["width"],
                                            f"{where}: the point's ring is no wider than a place's dot")
                    self.assertEqual(point["background"], "rgba(0, 0, 0, 0)", f"{where}: the point is filled in")
                    self.assertNotEqual(place["background"], "rgba(0, 0, 0, 0)", f"{where}: a place's dot is hollow")
                    measured(f"{where}: at Hall of Science with a friend {FRIEND_DISTANCE_M} m away and a vote: "
                             f"{len(shown['labels'])} labels shown ({places} of places), none overlapping")
                    page.close()
                finally:
                    api("POST", f"/v1/votes/{vote_id}/cancel", nok.token)

    def test_temple_names_around_wat_pho_stay_apart_inside_the_map_and_over_their_own_pins(self):
        wat_pho = temple_named("Wat Pho")
        for width, height, mobile in SIZES:
            where = size_name(width, height)
            with self.subTest(size=where):
                page = self.browser(width, height, mobile)
                page.open("/")
                page.set_point(wat_pho)
                page.click("#temples-button")
                page.wait(lambda driver: page.find_all("#temple-results li[data-place-id]"), "temples are listed")
                # One step out, as one does to see the temples around: Wat Phra Kaew, 530 m north, is then on a
                # phone's map too.
                page.click("#map .leaflet-control-zoom-out")

                def temples_drawn(shown):
                    return sum(1 for dot in shown["dots"] if dot["kind"] == "temple" and dot["inView"]) > 1
                shown = self.settled_map(page, temples_drawn, "more than one temple")
                temples = self.assert_readable(shown, where, "temple", LEAST_TEMPLE_LABELS)
                self.label(shown, "temple", wat_pho.id)
                # A temple is named once, on its temple pin, though it is a place as well.
                named = [label["text"] for label in shown["labels"]]
                self.assertEqual(len(named), len(set(named)), f"{where}: a name shows twice: {sorted(named)}")
                measured(f"{where}: at Wat Pho, {temples} temple names shown, none overlapping")
                page.close()

    def test_without_tiles_the_map_draws_the_footprints_places_have_and_keeps_their_names_apart(self):
        with open(FOOTPRINTS, encoding="utf-8") as fixture:
            names = {feature["properties"].get("name") for feature in json.load(fixture)["features"]}
        self.assertIn(FOOTPRINTED_BUILDING, names, f"{FOOTPRINTS.name} has a footprint named {FOOTPRINTED_BUILDING!r}")
        for width, height, mobile in SIZES:
            where = size_name(width, height)
            with self.subTest(size=where):
                page = self.browser(width, height, mobile)
                page.open("/")
                page.tab("places")
                page.fill("#place-search", FOOTPRINTED_BUILDING)
                page.submit("#place-search-form")
                result = page.visible('#place-results li[data-place-id] button',
                                      f"the search finds {FOOTPRINTED_BUILDING} (Scripts/check/browser.sh loads "
                                      f"{FOOTPRINTS.name}; #message says {page.message()!r})")
                result.click()
                shown = self.settled_map(page, lambda shown: shown["footprints"] > 0, "footprints")
                self.assertTrue(shown["noTiles"], f"{where}: the server under test names a tile server")
                places = self.assert_readable(shown, where)
                # The place chosen is named beside the point's ring round it.
                self.assertIn(FOOTPRINTED_BUILDING, [label["text"] for label in shown["labels"]],
                              f"{where}: the building chosen is not named on the map")
                pins = len(shown["dots"])
                took = page.js("const [last] = performance.getEntriesByName('vicinity-labels'); return last ? last.duration : null")
                self.assertIsNotNone(took, f"{where}: the page measured no placing of labels ('vicinity-labels')")
                measured(f"{where}: at {FOOTPRINTED_BUILDING}, {shown['footprints']} footprints drawn without tiles, "
                         f"{places} place names shown, none overlapping; labels of {pins} pins placed in {took:.1f} ms")
                page.close()


if __name__ == "__main__":
    unittest.main()
