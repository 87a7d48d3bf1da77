#!/usr/bin/env bash
# Installs the Debian packages Vicinity builds and runs with, when any is missing. Safe to run again.
#   libspatialite-dev  SpatiaLite (spatial SQL, R*Tree indexes) and, with it, SQLite and PROJ
#   libproj-dev        PROJ's geodesic routines (WGS84 distances) and its pkg-config file
#   zlib1g-dev         zlib, to read .csv.gz and .geojson.gz imports
#   pkg-config         lets the Swift build find them
#   spatialite-bin     the `spatialite` shell, to open the database by hand
#   wrk                HTTP load generator used by Scripts/bench/http.sh
#   libjs-leaflet      Leaflet, the map library the page at / loads (the server serves it from its folder)
#   node-qrcode-generator  the QR code library the page draws a phone app's settings with (served the same way)
#   openssl            makes the certificate of the mail relay the SMTP tests start
# and, for python3 on $PATH, aiosmtpd (from PyPI, else Debian's python3-aiosmtpd): the mail relay of those tests;
# http_ece (from PyPI, else Debian's python3-http-ece): the push service of the Web Push tests decrypts with it.
# Scripts/bench/peers.sh installs what only it needs (Redis, PostgreSQL with PostGIS) itself, and
# Scripts/check/browser.sh what the browser tests need (Chromium, chromedriver, Selenium, Thai fonts, zbarimg).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh

packages=(libspatialite-dev libproj-dev libsqlite3-dev zlib1g-dev pkg-config spatialite-bin wrk libjs-leaflet node-qrcode-generator openssl)
ensure_packages "${packages[@]}"
ensure_python_module aiosmtpd 'aiosmtpd>=1.4,<2' python3-aiosmtpd
ensure_python_module http_ece 'http-ece>=1.1,<2' python3-http-ece
echo "setup: system packages present (${packages[*]}), and aiosmtpd and http_ece for $(command -v python3)"
