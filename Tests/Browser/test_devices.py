"""Phones on the map page in a real browser: a student adds OwnTracks, scans the QR code the page draws (read here
with zbarimg from Debian's zbar-tools, as a phone's camera would), and the settings it holds reach the service
as the app would send them; she removes the phone and its password stops working at once. Scripts/check/browser.sh
runs these with the other browser tests; their sessions are checked for CSP violations and script errors by the
last test of test_map_page.py, which runs after these (discover takes the files in the order of their names).
"""

import base64
import json
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from vicinity_browser import SERVER, WAIT, Account, Browser, api, building, require_server

CONFIG_LINK_PREFIX = "owntracks:///config?inline="


def setUpModule():
    require_server()
    if shutil.which("zbarimg") is None:
        raise RuntimeError("no zbarimg: apt-get install zbar-tools (Scripts/check/browser.sh installs it)")


def owntracks_post(url, username, password, place):
    """Posts a location as OwnTracks does in HTTP mode; returns the status and the parsed answer."""
    body = json.dumps({"_type": "location", "lat": place.lat, "lon": place.lon, "acc": 8, "batt": 77, "conn": "w",
                       "tid": "P8", "tst": int(time.time())}).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


class DevicesTest(unittest.TestCase):
    maxDiff = None

    def browser(self):
        browser = Browser(self, 1280, 800)
        self.addCleanup(browser.close)
        return browser

    def scanned(self, browser, css):
        """What a scanner reads from the element's pixels: zbarimg on a screenshot of it alone."""
        with tempfile.TemporaryDirectory() as folder:
            image = f"{folder}/code.png"
            browser.find(css).screenshot(image)
            result = subprocess.run(["zbarimg", "--quiet", "--raw", image], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, f"zbarimg read no code from {css}: {result.stderr}")
        return result.stdout.strip()

    def test_a_student_adds_owntracks_scans_its_code_and_the_settings_in_it_share_her_position(self):
        student = Account("Pim", "Chaiyo", "pim").sign_up_through_api()
        friend = Account("Ploy", "Srisuk", "ploy").sign_up_through_api()
        student.befriend_through_api(friend)
        friend.share_through_api(building("csulb-lib"), "Reading")

        browser = self.browser()
        browser.open()
        browser.sign_in(student)
        browser.tab("account")
        browser.wait(lambda driver: "No phone yet." in browser.text("#device-list"), "the empty list of phones shows")
        browser.fill("#device-name", "Pixel 8")
        browser.submit("#device-form")
        browser.visible("#device-setup", "the new phone's settings show")
        self.assertEqual(browser.text("#device-setup-heading"), "Set up OwnTracks on Pixel 8")
        settings = {element.get_attribute("data-setting"): element.text
                    for element in browser.find_all("#device-settings dd")}
        self.assertEqual(settings["username"], student.username)
        self.assertEqual(settings["url"], f"{SERVER}/owntracks")
        self.assertEqual(len(settings["password"]), 43)
        self.assertIn("Pixel 8", browser.text("#device-list"))

        # The code on the screen is the app's own link, and the link holds the settings shown beside it.
        link = browser.find("#device-link").get_attribute("href")
        self.assertEqual(self.scanned(browser, "#device-qr svg"), link)
        self.assertTrue(link.startswith(CONFIG_LINK_PREFIX), link)
        inline = urllib.parse.unquote(link[len(CONFIG_LINK_PREFIX):])
        configuration = json.loads(base64.b64decode(inline, validate=True))
        self.assertEqual(configuration, {
            "_type": "configuration", "mode": 3, "auth": True, "url": settings["url"],
            "username": settings["username"], "password": settings["password"],
            "deviceId": settings["device_id"], "tid": settings["tracker_id"]})

        # What the app does with the scanned settings: post its position, and get the friend back to show.
        library = building("csulb-lib")
        status, answer = owntracks_post(configuration["url"], configuration["username"], configuration["password"],
                                        building("csulb-hsci"))
        self.assertEqual(status, 200)
        located = [entry for entry in answer if entry.get("_type") == "location"]
        self.assertEqual(len(located), 1, answer)
        self.assertAlmostEqual(located[0]["lat"], library.lat, places=6)
        self.assertAlmostEqual(located[0]["lon"], library.lon, places=6)
        hall = building("csulb-hsci")
        seen = [entry for entry in api("GET", "/v1/friends", friend.token)["friends"]
                if entry["username"] == student.username]
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0]["presence"], "current", "the friend sees the position the phone sent")
        self.assertAlmostEqual(seen[0]["position"]["lat"], hall.lat, places=6)
        self.assertAlmostEqual(seen[0]["position"]["lon"], hall.lon, places=6)

        # Done hides the password; removing the phone stops its password at once.
        browser.click("#device-setup-done")
        browser.wait(lambda driver: not browser.find("#device-setup").is_displayed(), "the settings card closes")
        self.assertEqual(browser.find_all("#device-settings dd"), [], "the password leaves the page with the card")
        browser.click("#device-list button[aria-label='Remove Pixel 8']")
        browser.wait(lambda driver: "No phone yet." in browser.text("#device-list"),
                     lambda: f"the list is empty after removing (it says {browser.text('#device-list')!r}, "
                             f"#message {browser.message()!r})")
        status, _ = owntracks_post(configuration["url"], configuration["username"], configuration["password"],
                                   building("csulb-hsci"))
        self.assertEqual(status, 401)


if __name__ == "__main__":
    unittest.main()
