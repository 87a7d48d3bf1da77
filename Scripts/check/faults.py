#!/usr/bin/env python3
"""Faults under load, against a running cluster (Scripts/cluster.sh) seeded by vicinity-seed, as clients see them.

    Scripts/check/faults.py BASE_URL CLUSTER_FOLDER SEED_FOLDER [--streams 100] [--writers 8] [--readers 4]
                            [--postgres-down 8]

While position writers, readers and pokes run through the load balancer, and STREAMS people hold event streams
through it (each reconnecting at once with its Last-Event-ID when its stream ends, as a browser's EventSource
does):
1. PostgreSQL is stopped for POSTGRES_DOWN seconds and started again (Scripts/postgres.sh stop, start), both
   fronts up, and each is asked directly for a write meanwhile and after;
2. one front is killed with SIGKILL.
Then it counts, and fails on any loss:
- every poke acknowledged (201) is in its recipient's stream exactly once, each stream in order; a poke whose
  answer was lost (the front died under it) may be there once or not at all;
- every position acknowledged last for its user is what the surviving front's memory gives, unless a later
  write of that user was answered 503 or not at all (then either);
- while PostgreSQL is down, every answer that is not a success is 503 with Retry-After, never a 500, and each
  front asked directly answers a write so; afterwards each takes writes again without a restart;
- how long the killed front's stream clients took to be streaming again (p50, max).
Prints the counts as lines "name: value" and exits non-zero on a loss.
"""
import argparse
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

# The stream reader and the client are shared with the other checks and benchmarks, in Scripts/lib.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sse
from client import Client

parser = argparse.ArgumentParser()
parser.add_argument("base")
parser.add_argument("cluster_folder")
parser.add_argument("seed_folder")
parser.add_argument("--streams", type=int, default=100)
parser.add_argument("--writers", type=int, default=8)
parser.add_argument("--readers", type=int, default=4)
parser.add_argument("--postgres-down", type=float, default=8.0)
options = parser.parse_args()
BASE = urllib.parse.urlparse(options.base)
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class Tally:
    """Answers by phase and status, and the failures that break a rule."""

    def __init__(self):
        self.lock = threading.Lock()
        self.phase = "before"
        self.counts = {}
        self.failures = []

    def note(self, answer, kind):
        with self.lock:
            key = (self.phase, kind, "none" if answer is None else answer[0])
            self.counts[key] = self.counts.get(key, 0) + 1
            if answer is None:
                return
            status, headers, text = answer
            if status >= 500 and status not in (502, 503, 504):
                self.failures.append(f"{self.phase}: {status} {text[:200]}")
            if status == 503 and "Retry-After" not in headers:
                self.failures.append(f"{self.phase}: 503 without Retry-After")


TALLY = Tally()
STOP = threading.Event()


class Stream(threading.Thread):
    """A person's event stream, reconnecting with Last-Event-ID whenever it ends; keeps the poke ids it read
    and when it was cut off and streaming again."""

    def __init__(self, token):
        super().__init__(daemon=True)
        self.token = token
        self.pokes, self.last_id = [], None
        self.cuts, self.resumes = [], []
        self.connected = threading.Event()
        self.connection = None
        self.was_open = False

    def run(self):
        while not STOP.is_set():
            try:
                self.follow()
            except (OSError, http.client.HTTPException):
                pass
            if STOP.is_set():
                return
            if not self.cuts or len(self.resumes) == len(self.cuts):
                self.cuts.append(time.time())
            # At once after a stream that was open; a second after a refused open (EventSource waits longer).
            time.sleep(0.05 if self.was_open else 1.0)

    def follow(self):
        self.was_open = False
        self.connection, response = sse.open_stream(BASE.hostname, BASE.port, self.token, self.last_id)
        if response.status != 200:
            response.read()
            raise OSError(f"stream answered {response.status}")
        if self.cuts and len(self.resumes) < len(self.cuts):
            self.resumes.append(time.time())
        self.was_open = True
        self.connected.set()
        for event_id, kind in sse.events(response):
            self.last_id = event_id
            if kind == "poke":
                self.pokes.append(int(event_id))
        raise OSError("stream ended")

    def stop(self):
        if self.connection is not None and self.connection.sock is not None:
            try:
                self.connection.sock.shutdown(2)
            except OSError:
                pass


def read_seeds():
    lines = open(os.path.join(options.seed_folder, "sessions.txt")).read().split("\n")
    sessions = [line.split() for line in lines if line]
    poker = open(os.path.join(options.seed_folder, "friendly.txt")).read().strip()
    return sessions, poker


def writer(index, sessions, acknowledged, unanswered):
    """Moves its own share of people, one write at a time, each to a new spot with a status saying which
    write it is; keeps per person the last acknowledged status and the statuses sent after it that got no
    answer."""
    client = Client(BASE.hostname, BASE.port)
    mine = sessions[index::options.writers]
    generator = random.Random(index)
    sequence = 0
    while not STOP.is_set():
        token, lat, lon = mine[generator.randrange(len(mine))]
        sequence += 1
        status = f"w{index}-{sequence}"
        body = {"lat": float(lat) + generator.uniform(-5e-4, 5e-4), "lon": float(lon) + generator.uniform(-5e-4, 5e-4),
                "status": status}
        answer = client.send("PUT", "/v1/me/position", token, body)
        TALLY.note(answer, "write")
        if answer is not None and answer[0] == 200:
            acknowledged[token] = status
            unanswered.pop(token, None)
        elif answer is None or answer[0] in (502, 503, 504):
            # No answer, or a 503 from a front whose connection closed under the statement: maybe written.
            unanswered.setdefault(token, set()).add(status)
            if answer is not None:
                time.sleep(0.1)
        else:
            TALLY.failures.append(f"PUT position: {answer[0]} {answer[2][:200]}")


def reader(index, token):
    client = Client(BASE.hostname, BASE.port)
    generator = random.Random(100 + index)
    while not STOP.is_set():
        if generator.random() < 0.5:
            path = f"/v1/places/closest?lat={33.77 + generator.random() * 0.02:.6f}&lon={-118.12 + generator.random() * 0.02:.6f}"
            answer = client.send("GET", path)
        else:
            answer = client.send("GET", "/v1/friends", token)
        TALLY.note(answer, "read")
        if answer is not None and answer[0] == 503:
            time.sleep(0.1)


def poke_round(client, poker, recipients, acknowledged, unanswered):
    """One poke to each recipient. A poke without an answer is not sent again (it may have been done); one
    answered 503 is sent again after the wait it asks for, and counted as maybe done (the front's connection
    may have closed under its commit)."""
    for person, stream in recipients:
        for _ in range(50):
            answer = client.send("POST", f"/v1/friends/{person}/pokes", poker)
            TALLY.note(answer, "poke")
            if answer is None or answer[0] in (502, 504):
                unanswered[person] = unanswered.get(person, 0) + 1
                break
            if answer[0] == 201:
                acknowledged[person] = acknowledged.get(person, 0) + 1
                break
            if answer[0] == 429 and unanswered.get(person, 0):
                break  # the pair's allowance, spent by a poke whose answer was lost
            if answer[0] != 503:
                TALLY.failures.append(f"poke: {answer[0]} {answer[2][:200]}")
                break
            unanswered[person] = unanswered.get(person, 0) + 1
            time.sleep(float(answer[1].get("Retry-After", "1")))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    sessions, poker = read_seeds()
    client = Client(BASE.hostname, BASE.port)
    answer = client.send("GET", "/v1/friends", poker)
    if answer is None or answer[0] != 200:
        sys.exit(f"the poker's friends: {answer}")
    friends = json.loads(answer[2])["friends"]
    if len(friends) < options.streams:
        sys.exit(f"the poker has {len(friends)} friends, fewer than {options.streams} streams")
    by_name = {f"user{index:05d}": line[0] for index, line in enumerate(sessions)}
    recipients = []
    for friend in friends[: options.streams]:
        stream = Stream(by_name[friend["username"]])
        stream.start()
        recipients.append((friend["id"], stream))
    for _, stream in recipients:
        if not stream.connected.wait(30):
            sys.exit("a stream did not open within 30 s")
    # The recipients and the poker write no positions: their streams and pokes are counted on their own.
    movers = [line for index, line in enumerate(sessions) if index > 200]
    positions_acknowledged, positions_unanswered = {}, {}
    threads = [threading.Thread(target=writer, args=(index, movers, positions_acknowledged, positions_unanswered), daemon=True)
               for index in range(options.writers)]
    threads += [threading.Thread(target=reader, args=(index, poker), daemon=True) for index in range(options.readers)]
    for thread in threads:
        thread.start()
    pokes_acknowledged, pokes_unanswered = {}, {}
    poke_client = Client(BASE.hostname, BASE.port)
    fronts = [line.split() for line in open(os.path.join(options.cluster_folder, "fronts")).read().splitlines()]

    TALLY.phase = "before"
    poke_round(poke_client, poker, recipients, pokes_acknowledged, pokes_unanswered)
    time.sleep(2)

    # PostgreSQL stopped and started under load, both fronts up: each, asked directly, answers a write 503
    # with Retry-After while it is down, and takes one again afterwards without a restart.
    TALLY.phase = "postgres stopping"
    subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "stop"], check=True, stdout=subprocess.DEVNULL)
    TALLY.phase = "postgres down"
    stopped_at = time.time()
    token, lat, lon = sessions[150]  # neither a mover nor a stream's owner
    direct = {port: Client(BASE.hostname, int(port)) for _, port in fronts}
    body = {"lat": float(lat), "lon": float(lon), "status": "down"}
    while_down = {}
    for port, client in direct.items():
        answer = client.send("PUT", "/v1/me/position", token, body)
        while_down[port] = None if answer is None else (answer[0], answer[1].get("Retry-After"))
        if answer is None or answer[0] != 503 or "Retry-After" not in answer[1]:
            TALLY.failures.append(f"front {port} with PostgreSQL down answered {while_down[port]}, not 503 with Retry-After")
    time.sleep(max(0.0, options.postgres_down - (time.time() - stopped_at)))
    TALLY.phase = "postgres starting"
    subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "start"], check=True, stdout=subprocess.DEVNULL)
    down_for = time.time() - stopped_at
    TALLY.phase = "recovered"
    recovered_after = {}
    for port, client in direct.items():
        while time.time() - stopped_at < down_for + 60:
            answer = client.send("PUT", "/v1/me/position", token, {"lat": float(lat), "lon": float(lon), "status": f"back {port}"})
            if answer is not None and answer[0] == 200:
                recovered_after[port] = time.time() - stopped_at - down_for
                positions_acknowledged[token] = f"back {port}"
                break
            time.sleep(0.1)
        else:
            TALLY.failures.append(f"front {port}: no write succeeded within 60 s of PostgreSQL starting again")
    poke_round(poke_client, poker, recipients, pokes_acknowledged, pokes_unanswered)
    time.sleep(2)

    # One front killed with SIGKILL under load: its clients go to the other.
    TALLY.phase = "front killed"
    killed_at = time.time()
    os.kill(int(fronts[0][0]), signal.SIGKILL)
    poke_round(poke_client, poker, recipients, pokes_acknowledged, pokes_unanswered)
    time.sleep(3)
    STOP.set()
    for thread in threads:
        thread.join(60)

    # --- Counting ---------------------------------------------------------------------------------------
    # Streams get what was acknowledged: wait until each has its pokes (or the time runs out).
    deadline = time.time() + 30
    for person, stream in recipients:
        while len(stream.pokes) < pokes_acknowledged.get(person, 0) and time.time() < deadline:
            time.sleep(0.05)
    lost, doubled, disordered = 0, 0, 0
    for person, stream in recipients:
        seen = stream.pokes
        if len(set(seen)) != len(seen):
            doubled += 1
        if seen != sorted(seen):
            disordered += 1
        expected, maybe = pokes_acknowledged.get(person, 0), pokes_unanswered.get(person, 0)
        if not expected <= len(set(seen)) <= expected + maybe:
            lost += 1
            TALLY.failures.append(f"stream of {person}: {len(set(seen))} pokes, {expected} acknowledged, {maybe} unanswered")
        stream.stop()
    if doubled:
        TALLY.failures.append(f"{doubled} streams were given a poke twice")
    if disordered:
        TALLY.failures.append(f"{disordered} streams were given pokes out of order")
    # A stream's cut by the kill is its first at or after it; its resume is the one that ends that cut.
    cut, resumed = [], []
    for _, stream in recipients:
        after = [index for index, at in enumerate(stream.cuts) if at >= killed_at]
        if after:
            cut.append(stream)
            if after[0] < len(stream.resumes):
                resumed.append(stream.resumes[after[0]] - killed_at)
    if len(resumed) != len(cut):
        TALLY.failures.append(f"{len(cut) - len(resumed)} of {len(cut)} streams cut by the kill never resumed")

    survivor = Client(BASE.hostname, int(fronts[1][1]))
    positions_wrong = 0
    for token, status in positions_acknowledged.items():
        allowed = {status} | positions_unanswered.get(token, set())
        answer = survivor.send("GET", "/v1/me/position", token)
        shown = json.loads(answer[2]).get("status") if answer and answer[0] == 200 else None
        if shown not in allowed:
            positions_wrong += 1
            if positions_wrong <= 5:
                TALLY.failures.append(f"position: the surviving front shows {shown!r}, acknowledged last {status!r}")

    print(f"streams: {len(recipients)}, cut by the kill: {len(cut)}")
    if resumed:
        print(f"stream resume after the kill: p50 {statistics.median(resumed) * 1000:.0f} ms, max {max(resumed) * 1000:.0f} ms")
    print(f"pokes acknowledged: {sum(pokes_acknowledged.values())}, unanswered: {sum(pokes_unanswered.values())}, "
          f"streams short of their acknowledged pokes: {lost}, doubled: {doubled}, out of order: {disordered}")
    print(f"positions: {len(positions_acknowledged)} people's last acknowledged write checked on the surviving front, "
          f"{sum(len(v) for v in positions_unanswered.values())} writes answered 503 or not at all (maybe written), wrong: {positions_wrong}")
    print(f"postgres down for {down_for:.1f} s; each front, asked directly meanwhile: {while_down}; "
          f"first write on each after it was back: " + ", ".join(f"{port} {after:.1f} s" for port, after in recovered_after.items()))
    for phase in ("before", "postgres stopping", "postgres down", "postgres starting", "recovered", "front killed"):
        counts = {f"{kind} {status}": count for (p, kind, status), count in sorted(TALLY.counts.items(), key=str) if p == phase}
        print(f"answers {phase}: {counts}")
    if TALLY.failures:
        print("FAILED:")
        for failure in TALLY.failures[:30]:
            print("  " + failure)
        sys.exit(1)
    print("faults: nothing acknowledged was lost")


main()
