#!/usr/bin/env python3
"""How long a position written through one front takes to show through another (the change feed's lag).

    Scripts/bench/feed_lag.py FRONT_A_URL FRONT_B_URL SEED_FOLDER [--samples 300]

SEED_FOLDER is vicinity-seed's output: user00000 (friendly.txt) and its first friend. Each sample: the friend
moves through front A (PUT /v1/me/position, a new status each time); as soon as A answers, user00000 asks
front B for that friend (GET /v1/friends/{id}) again and again until the new status shows. The lag is from A's
answer to the first answer of B that shows it, so it is rounded up to one of B's answers: their median time is
printed too, as the resolution. Prints "lag p50 MS p99 MS max MS; resolution MS; samples N".
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse

parser = argparse.ArgumentParser()
parser.add_argument("front_a")
parser.add_argument("front_b")
parser.add_argument("seed_folder")
parser.add_argument("--samples", type=int, default=300)
options = parser.parse_args()


def connect(url):
    parsed = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)


def call(connection, method, path, token, body=None):
    headers = {"Authorization": "Bearer " + token}
    if body is not None:
        headers["Content-Type"] = "application/json"
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    if response.status != 200:
        sys.exit(f"{method} {path}: {response.status} {text[:300]}")
    return json.loads(text)


def main():
    sessions = [line.split() for line in open(os.path.join(options.seed_folder, "sessions.txt")) if line.strip()]
    watcher = open(os.path.join(options.seed_folder, "friendly.txt")).read().strip()
    a, b = connect(options.front_a), connect(options.front_b)
    friends = call(b, "GET", "/v1/friends", watcher)["friends"]
    mover_id, mover_name = friends[0]["id"], friends[0]["username"]
    mover_token, lat, lon = sessions[int(mover_name.removeprefix("user"))]
    lags, reads = [], []
    for sample in range(options.samples):
        status = f"lag {sample} {time.time():.3f}"
        call(a, "PUT", "/v1/me/position", mover_token, {"lat": float(lat) + sample * 1e-6, "lon": float(lon), "status": status})
        answered = time.perf_counter()
        while True:
            asked = time.perf_counter()
            shown = call(b, "GET", f"/v1/friends/{mover_id}", watcher)
            now = time.perf_counter()
            reads.append(now - asked)
            if shown.get("status") == status:
                lags.append(now - answered)
                break
            if now - answered > 30:
                sys.exit(f"sample {sample}: not shown through front B within 30 s")
    lags.sort()
    p = lambda fraction: lags[min(len(lags) - 1, int(fraction * len(lags)))] * 1000
    print(f"lag p50 {p(0.5):.1f} ms p99 {p(0.99):.1f} ms max {lags[-1] * 1000:.1f} ms; "
          f"resolution {statistics.median(reads) * 1000:.1f} ms; samples {len(lags)}")


main()
