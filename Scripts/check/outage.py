#!/usr/bin/env python3
"""Drives a Vicinity server over PostgreSQL while PostgreSQL restarts and then stops, and checks what clients saw.

    outage.py URL POSTGRES_SCRIPT [--seconds S] [--writers N] [--down D]

N writers (one signed-in user each) send PUT /v1/me/position with a growing number in their status, and
guests ask /v1/places/nearby. After S seconds `POSTGRES_SCRIPT restart` restarts PostgreSQL (fast shutdown:
sessions ended, as a failover does); S seconds later `POSTGRES_SCRIPT stop` stops it for D seconds (default 8,
longer than the server's 5 s wait for a connection) before `POSTGRES_SCRIPT start`; the load goes on S more.
Fails (exit 1) when:
- any answer is not 2xx, or is a 503 without Retry-After and a problem+json body (no 500, no other status);
- any request takes longer than the bound (the server's 5 s connection wait and a margin);
- no write was answered 503 while PostgreSQL was down, or none succeeded after it came back (no recovery);
- an acknowledged position is lost: each user's stored status must be their last acknowledged number or a
  later one they sent (a write cut by the outage may or may not have committed; its client was told 503).
Prints counts per status, the longest request, and how long writes failed.
"""
import argparse
import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.parse

BOUND_SECONDS = 10.0  # the server's 5 s wait for a connection, and a margin for a busy machine


def request(base, method, path, body=None, token=None, timeout=30.0):
    parsed = urllib.parse.urlparse(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    headers = {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Bearer " + token
    started = time.monotonic()
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data, time.monotonic() - started
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("postgres")
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--down", type=float, default=8)
    arguments = parser.parse_args()
    base = arguments.url

    tokens = []
    for index in range(arguments.writers):
        name = f"outage{index}-{int(time.time())}"
        password = "outage check password"
        status, _, data, _ = request(base, "POST", "/v1/users", {"username": name, "password": password,
                                                                 "first_name": "Outage", "last_name": "Check"})
        assert status == 201, (status, data)
        status, _, data, _ = request(base, "POST", "/v1/sessions", {"username": name, "password": password})
        assert status == 201, (status, data)
        tokens.append(json.loads(data)["token"])

    lock = threading.Lock()
    statuses = {}
    problems = []
    longest = [0.0]
    acknowledged = [0] * len(tokens)
    sent = [set() for _ in tokens]
    failing = {"first": None, "last": None}
    stop = threading.Event()
    down = threading.Event()
    back = threading.Event()
    unavailable_while_down = [0]
    successes_after = [0]

    def record(status, headers, data, seconds, what):
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            longest[0] = max(longest[0], seconds)
            if seconds > BOUND_SECONDS:
                problems.append(f"{what} took {seconds:.1f} s")
            if status == 503:
                lowered = {key.lower(): value for key, value in headers.items()}
                if "retry-after" not in lowered or lowered.get("content-type") != "application/problem+json":
                    problems.append(f"{what}: 503 without Retry-After or problem+json: {lowered}")
            elif not 200 <= status < 300:
                problems.append(f"{what}: status {status}: {data[:200]!r}")

    def writer(index):
        number = 0
        while not stop.is_set():
            number += 1
            with lock:
                sent[index].add(number)
            try:
                status, headers, data, seconds = request(
                    base, "PUT", "/v1/me/position", {"lat": 33.779842, "lon": -118.112526, "status": f"n{number}"},
                    tokens[index])
            except OSError as error:
                with lock:
                    problems.append(f"writer {index}: {error}")
                continue
            record(status, headers, data, seconds, f"PUT position {index}/{number}")
            now = time.monotonic()
            with lock:
                if 200 <= status < 300:
                    acknowledged[index] = number
                    if back.is_set():
                        successes_after[0] += 1
                elif status == 503:
                    failing["first"] = failing["first"] or now
                    failing["last"] = now
                    if down.is_set() and not back.is_set():
                        unavailable_while_down[0] += 1
            if status == 503:
                time.sleep(0.2)

    def reader():
        while not stop.is_set():
            try:
                status, headers, data, seconds = request(base, "GET", "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=300")
            except OSError as error:
                with lock:
                    problems.append(f"reader: {error}")
                continue
            record(status, headers, data, seconds, "GET nearby")

    threads = [threading.Thread(target=writer, args=(index,)) for index in range(len(tokens))]
    threads.append(threading.Thread(target=reader))
    for thread in threads:
        thread.start()
    time.sleep(arguments.seconds)
    started = time.monotonic()
    subprocess.run(f"{arguments.postgres} restart", shell=True, check=True)
    print(f"PostgreSQL restarted in {time.monotonic() - started:.1f} s")
    time.sleep(arguments.seconds)
    subprocess.run(f"{arguments.postgres} stop", shell=True, check=True)
    down.set()
    print(f"PostgreSQL stopped for {arguments.down:.0f} s")
    time.sleep(arguments.down)
    subprocess.run(f"{arguments.postgres} start", shell=True, check=True, stdout=subprocess.DEVNULL)
    back.set()
    time.sleep(arguments.seconds)
    stop.set()
    for thread in threads:
        thread.join()

    if unavailable_while_down[0] == 0:
        problems.append("no write was answered 503 while PostgreSQL was stopped")
    if successes_after[0] == 0:
        problems.append("no position was written after PostgreSQL came back: the server did not recover")
    for index, token in enumerate(tokens):
        status, _, data, _ = request(base, "GET", "/v1/me/position", token=token)
        if status != 200:
            problems.append(f"user {index}: GET /v1/me/position answered {status}")
            continue
        stored = int(json.loads(data)["status"][1:])
        if stored < acknowledged[index] or stored not in sent[index]:
            problems.append(f"user {index}: stored n{stored}, but n{acknowledged[index]} was acknowledged")

    print("answers by status:", dict(sorted(statuses.items())))
    print(f"longest request: {longest[0]:.2f} s")
    print(f"writes answered 503 while PostgreSQL was stopped: {unavailable_while_down[0]}; positions written after "
          f"it came back: {successes_after[0]}; users whose last acknowledged position was checked: "
          f"{sum(1 for index in range(len(tokens)) if acknowledged[index] > 0)}")
    for problem in problems[:20]:
        print("PROBLEM:", problem)
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
