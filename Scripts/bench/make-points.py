#!/usr/bin/env python3
"""Uniform random places in a square, as a places CSV that `vicinity import` reads.

    Scripts/bench/make-points.py COUNT OUT.csv [--seed N] [--side-km K]

The square (default 50 x 50 km) is centred on CSULB's Hall of Science (33.779842, -118.112526, as in
Data/csulb-buildings.csv); points are uniform in degrees, which over 50 km is uniform in area to 0.3%.
The same seed gives the same points, so Vicinity, Redis and PostGIS are loaded with identical data.
Categories cycle through six names so that category filters have something to choose.
"""
import argparse
import math
import random

CENTRE = (33.779842, -118.112526)
MEAN_RADIUS_M = 6_371_008.8  # IUGG mean Earth radius, as GeoCore's Earth.meanRadius
CATEGORIES = ["academic", "buddhist_temple", "cafe", "library", "shop", "residential"]


def square(side_km):
    half = side_km * 500.0
    per_degree = MEAN_RADIUS_M * math.pi / 180
    return half / per_degree, half / (per_degree * math.cos(math.radians(CENTRE[0])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--side-km", type=float, default=50.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lat_half, lon_half = square(args.side_km)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("id,name,category,lat,lon\n")
        for index in range(args.count):
            lat = CENTRE[0] + rng.uniform(-lat_half, lat_half)
            lon = CENTRE[1] + rng.uniform(-lon_half, lon_half)
            out.write(f"p{index},Place {index},{CATEGORIES[index % len(CATEGORIES)]},{lat:.7f},{lon:.7f}\n")


if __name__ == "__main__":
    main()
