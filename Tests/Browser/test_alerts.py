"""Alerts on the page: a student lets a friend set alerts on her; the friend sets one at a point on the map and
is told, as a notice, when she arrives there; she sees who watches her and stops it. The error for an alert at
no point is said beside the control. Every coordinate comes from Data/csulb-buildings.csv."""

import unittest

from vicinity_browser import Account, Browser, api, building, require_server


def setUpModule():
    require_server()


class AlertsTest(unittest.TestCase):
    maxDiff = None

    def browser(self, width=1280, height=800, mobile=False):
        browser = Browser(self, width, height, mobile)
        self.addCleanup(browser.close)
        return browser

    def test_a_student_allows_a_friend_who_sets_an_alert_at_a_point_and_is_told_when_she_arrives(self):
        pim = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        nok = Account("Nok", "Srisuk", "nok").sign_up_through_api()
        pim.befriend_through_api(nok)
        library, hall = building("csulb-lib"), building("csulb-hsci")
        pim.share_through_api(hall)

        watched = self.browser()
        watched.open("/")
        watched.sign_in(pim)
        watched.tab("friends")
        watched.wait(lambda driver: watched.find_all(f"#watcher-friend option[value='{nok.id}']"), "Pim's form offers Nok")
        watched.select("#watcher-friend", nok.id)
        watched.submit("#watcher-form")
        watched.wait(lambda driver: "may set alerts on you" in watched.text(f"#watchers-list li[data-user-id='{nok.id}']")
                     if watched.find_all(f"#watchers-list li[data-user-id='{nok.id}']") else False,
                     lambda: f"Pim's list says Nok may set alerts (it says {watched.text('#watchers-list')!r})")

        watcher = self.browser()
        watcher.open("/")
        watcher.sign_in(nok)
        watcher.tab("friends")
        watcher.wait(lambda driver: watcher.find_all(f"#alert-friend option[value='{pim.id}']"), "Nok's form offers Pim")
        # No point chosen yet: said beside "does this", in the form's words.
        watcher.submit("#alert-form")
        watcher.wait(lambda driver: "needs a chosen point" in watcher.text("#alert-kind-error"),
                     lambda: f"the missing point is said beside the control (it says {watcher.text('#alert-kind-error')!r})")
        self.assertEqual(api("GET", "/v1/alerts", nok.token)["alerts"], [], "nothing was set")

        watcher.set_point(library)
        watcher.tab("friends")
        watcher.select("#alert-friend", pim.id)
        watcher.select("#alert-kind", "point")
        watcher.select("#alert-radius", "100")
        watcher.submit("#alert-form")
        item = "#alerts-list li[data-alert-id]"
        watcher.wait(lambda driver: watcher.find_all(item), lambda: f"Nok's alerts list shows one (#message {watcher.message()!r})")
        self.assertIn("When Pim Chaiyo arrives at or leaves", watcher.text(item))
        self.assertIn("100 m", watcher.text(item))
        alerts = api("GET", "/v1/alerts", nok.token)["alerts"]
        self.assertEqual([(alert["kind"], alert["point"]["lat"], alert["point"]["lon"], alert["radius_m"]) for alert in alerts],
                         [("point", library.lat, library.lon, 100)])

        # Pim walks from Hall of Science (350 m away) to the Library: Nok's page says so as a notice.
        pim.share_through_api(hall)
        pim.share_through_api(library)
        notice = watcher.wait(lambda driver: [node for node in watcher.find_all("#notices li")
                                              if node.is_displayed() and "Pim Chaiyo arrived at" in node.text],
                              "a visible notice on Nok's page says Pim arrived")[0]
        self.assertNotIn(str(library.lat), notice.text, "the notice names no coordinates")

        # Pim sees Nok's alert, and stops Nok: the alert ends with it.
        # Opening the panel again reads the lists again.
        watched.tab("places")
        watched.tab("friends")
        row = f"#watchers-list li[data-user-id='{nok.id}']"
        watched.wait(lambda driver: watched.find_all(row) and "arrive at or leave" in watched.text(row),
                     lambda: f"Pim's list shows what Nok watches (it says {watched.text('#watchers-list')!r})")
        watched.click(f"{row} button.revoke-watcher")
        watched.wait(lambda driver: not watched.find_all(row), "Nok leaves Pim's list")
        self.assertEqual(api("GET", "/v1/alerts", nok.token)["alerts"], [])


if __name__ == "__main__":
    unittest.main()
