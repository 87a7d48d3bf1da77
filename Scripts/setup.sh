#!/usr/bin/env bash
# Installs the Debian packages Vicinity builds and runs with, when any is missing. Safe to run again.
#   libspatialite-dev  SpatiaLite (spatial SQL, R*Tree indexes) and, with it, SQLite and PROJ
#   libproj-dev        PROJ's geodesic routines (WGS84 distances) and its pkg-config file
#   pkg-config         lets the Swift build find both
#   spatialite-bin     the `spatialite` shell, to open the database by hand
#   wrk                HTTP load generator used by Scripts/benchmark-http.sh
set -euo pipefail

packages=(libspatialite-dev libproj-dev libsqlite3-dev pkg-config spatialite-bin wrk)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: system packages present (${packages[*]})"
    exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
