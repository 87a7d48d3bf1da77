#!/usr/bin/env bash
# The map page in a real browser: Selenium drives headless Chromium (both from Debian) through what people do
# on it, against a server over the shipped data on loopback:
#   Scripts/check/browser.sh [-k PATTERN]            release build
#   Scripts/check/browser.sh --quick [-k PATTERN]    the debug build
# Tests/Browser/test_map_page.py: two students sign up in two browsers, befriend each other through the page,
# share positions at CSULB buildings, and one's pin follows the other's move within 2 s, without reload; a
# guest finds Wat Pho and gets temples with distances and directions links; a vote opened by one is found
# nearby by the other and its result shows on both pages when both have voted; a teacher's vote ends with two
# ballots under one name, the teacher voids one and publishes, and both students see the result with one
# ballot voided; a teacher edits, extends and closes a vote and calls another off after confirming; a status
# written as HTML shows as text and never runs; a poke shows as a notice; a 375 px phone gets no sideways
# scroll and sees the map; GET / has a Content-Security-Policy without 'unsafe-inline', and no session logged
# a CSP violation or a script error. Tests/Browser/test_accounts.py: a student signs up with an e-mail address
# and the code mailed to it, signs out and in by e-mail; forgets the password, signs in with a code and sets a
# new one without the old; signs in with a code alone; changes the address (the old one stays until the new
# code is confirmed); downloads her data as a JSON file; deletes her account after confirming; a wrong code is
# refused next to the code field. Tests/Browser/test_devices.py: a student adds OwnTracks on the page, the QR code
# it draws is read with zbarimg and holds the settings shown, posting with them shares her position, and
# removing the phone stops its password. Tests/Browser/test_installed_app.py: the page registers its service worker
# for the whole page, its manifest is linked and Chromium finds it installable; "Notify me on this device" in
# headless Chromium (no push service) says so, or that the server sends no notifications (no --vapid-key), and
# stays off; blocked notifications are said to be blocked; the worker shows a push message's title, text, tag and
# address, and a click on it opens that panel in the open page. It writes docs/screenshots/map-1280x800.png and map-375x812.png and prints
# the page weight and the time to first map. Tests/Browser/test_everyday_use.py, at 1280x800 and on a 375x812 phone:
# errors beside the control that caused them, in view and in the form's own words; the title above the map, a place
# chosen in the panel shown on the map, notices clear of the zoom buttons and tabs that go by themselves; an outage
# (a relay between browser and server cut and restored) said as "Reconnecting…", live updates back within about
# 2 s of the server and its errors gone; the main flows by keyboard alone with the focus visible and kept after
# signing in; signing out with a direction line shown; temples too far to walk to; an accessibility check (axe-core
# from PyPI's axe-selenium-python, installed here when pip can, and labels, focus order and contrast by hand).
# Tests/Browser/test_legible_map.py, at 1280x800 and on a 375x812 phone: labels of every layer apart, inside the map
# and uncovered; one's own label clear of a friend 14 m away; a vote's pin beside its initiator's, not under it; the
# chosen point a ring; temple names around Wat Pho named once; footprints drawn without tiles (the UCSB fixture,
# loaded here beside the shipped data).
# Fails when any test fails. -k runs only the tests whose names hold PATTERN.
# The server mails through a real SMTP relay on loopback (aiosmtpd, started and stopped here): every test
# person has an e-mail address, confirmed with the code the tests read from the relay's mail folder
# (VICINITY_BROWSER_MAIL_DIR), as a server with a relay asks by default (--require-email).
# VICINITY_BROWSER_PORT picks the port (default 18085); each browser session's last screenshot and HTML are
# left in $VICINITY_BROWSER_ARTIFACTS (default /tmp/vicinity-browser-artifacts) for a failure to be looked at,
# and, when a test fails, the server's and the relay's logs and the mail the relay took.
# With VICINITY_PAGE_DIR=Sources/VicinityHTTP/Resources/web the server reads the page from disk rather than
# its built-in copy (`vicinity serve --page-dir`), so page edits are checked without a rebuild.
set -euo pipefail
cd "$(dirname "$0")/../.."
configuration=release
if [ "${1:-}" = "--quick" ]; then configuration=debug; shift; fi
port="${VICINITY_BROWSER_PORT:-18085}"
source Scripts/lib/packages.sh
# Thai fonts, so that Thai names are drawn in the screenshots rather than boxes.
# zbar-tools: zbarimg reads the QR code the page draws.
ensure_packages chromium chromium-driver python3-selenium libjs-leaflet node-qrcode-generator fonts-thai-tlwg zbar-tools
source Scripts/lib/shipped-server.sh
prepare_shipped_database "$configuration"
# Footprints, which the shipped data has none of: OpenStreetMap's UC Santa Barbara buildings (Data/README.md,
# test fixtures), far from every shipped place, for the map to draw without tiles.
"$vicinity" import places Tests/VicinityImportTests/Fixtures/ucsb-buildings-osm.geojson --db "$shipped_db" >/dev/null
start_mail_relay
# A VAPID key of its own, so that the page's "Notify me on this device" meets a server that sends notifications.
"$vicinity" push keygen "$work/vapid.pem" >/dev/null
serve_options+=(--vapid-key "$work/vapid.pem" --vapid-subject "mailto:operators@example.edu")
start_server "$port" "$shipped_db"

# axe-core for the accessibility check, from PyPI's axe-selenium-python, into a folder of the build and without
# its dependencies, so that Debian's Selenium stays the one the tests use (2.x: 3.x asks for Python 3.12). Without
# it the check runs its own rules only.
axe_dir="$PWD/.build/browser-python"
if ! PYTHONPATH="$axe_dir" /usr/bin/python3 -c 'import axe_selenium_python' 2>/dev/null; then
    PIP_ROOT_USER_ACTION=ignore /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$axe_dir" 'axe-selenium-python>=2.1.6,<3' >&2 \
        || echo "axe-selenium-python could not be installed: the accessibility check runs its own rules only" >&2
fi

# Debian's Python, whose path holds Debian's python3-selenium (a pyenv or venv python3 may not). Every wait in
# the tests has its own bound; the timeout is for a browser that stops answering altogether.
status=0
VICINITY_BROWSER_URL="$shipped_server" VICINITY_BROWSER_MAIL_DIR="$mail_dir" PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$axe_dir" \
    timeout --kill-after=30 1500 /usr/bin/python3 -m unittest discover -s Tests/Browser -p 'test_*.py' -v "$@" || status=$?
if [ "$status" -ne 0 ]; then
    artifacts="${VICINITY_BROWSER_ARTIFACTS:-/tmp/vicinity-browser-artifacts}"
    mkdir -p "$artifacts"
    cp "$work/server.log" "$work/mail-relay.log" "$artifacts/" 2>/dev/null || true
    rm -rf "$artifacts/mail" && cp -r "$mail_dir" "$artifacts/mail" 2>/dev/null || true
    echo "the server's and the relay's logs and the mail taken are in $artifacts" >&2
fi
exit "$status"
