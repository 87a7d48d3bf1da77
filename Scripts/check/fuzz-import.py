#!/usr/bin/env python3
"""Mutation fuzzing of `vicinity import places --dry-run`: every mangled file must end in exit 0 (imported)
or 65 (refused with its problems listed), never a crash, a hang or another status.

    Scripts/check/fuzz-import.py [RUNS] [SEED]      default 300 runs, seed 1; needs a release build

Seeds are the shipped CSULB CSV and the UCSB GeoJSON test fixture; each run flips, inserts, deletes and
duplicates bytes. Failing inputs are kept in a temporary folder named at the end.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
binary = os.path.join(root, ".build", "release", "vicinity")
if not os.access(binary, os.X_OK):
    sys.exit("fuzz-import: build first: swift build -c release --product vicinity")
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 300
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
seeds = {
    "csv": open(os.path.join(root, "Data", "csulb-buildings.csv"), "rb").read()[:6000],
    "geojson": open(os.path.join(root, "Tests", "VicinityImportTests", "Fixtures", "ucsb-buildings-osm.geojson"), "rb").read()[:8000],
}
pieces = [b'"', b",", b"\n", b"\r", b"{", b"[", b"]", b"}", b"\x00", b"-", b"1e999", b"NaN", b"\xff", b"9" * 30]
work = tempfile.mkdtemp(prefix="vicinity-fuzz-")
database = os.path.join(work, "fuzz.sqlite")
failures = 0
for run in range(runs):
    kind = random.choice(sorted(seeds))
    data = bytearray(seeds[kind])
    for _ in range(random.randint(1, 20)):
        choice = random.random()
        at = random.randrange(len(data)) if data else 0
        if choice < 0.3 and data:
            data[at] = random.randrange(256)
        elif choice < 0.5:
            data[at:at] = random.choice(pieces)
        elif choice < 0.7 and data:
            del data[at:at + random.randint(1, 50)]
        elif data:
            a, b = sorted((random.randrange(len(data)), random.randrange(len(data))))
            data[at:at] = data[a:b][:200]
    path = os.path.join(work, f"input.{kind}")
    with open(path, "wb") as file:
        file.write(data)
    try:
        result = subprocess.run([binary, "import", "places", path, "--db", database, "--dry-run"],
                                capture_output=True, timeout=60)
        status = result.returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
    if status not in (0, 65):
        failures += 1
        kept = os.path.join(work, f"failure-{run}.{kind}")
        os.replace(path, kept)
        print(f"run {run}: exit {status}, input kept as {kept}")
if failures:
    print(f"{runs} runs, {failures} failures; inputs in {work}")
    sys.exit(1)
shutil.rmtree(work)
print(f"{runs} runs, 0 failures")
