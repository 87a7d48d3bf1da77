#!/usr/bin/env python3
"""A soak: steady mixed load on one running server for a while, sampling the server every 10 s.

    soak.py BASE_URL SERVER_PID SEED_FOLDER [--minutes 10] [--rate 200] [--clients 8] [--streams 40]
            [--interval 10]

CLIENTS threads share RATE requests a second (each paced to its share; a request that comes late is sent at
once, not skipped), each request one of: places nearby (1000 m, limit 20) and closest at random points around
CSULB, one's friends (user00000, 200 friends, or a friend of theirs), nearby friends, a position update of one
of the seeded people, a ballot on an open vote by someone who has not voted in it (a new vote of 100 is opened,
by someone new, whenever the current one is full). STREAMS event streams of seeded people connect, stay 5 to
60 s and leave, coming back with their Last-Event-ID.

Every INTERVAL seconds a row: requests and their p50 and p99 over the interval, answers other than the
expected ones, the server's resident memory (VmRSS), open descriptors, threads (the server's task count as
the kernel sees it), connections and event streams open (from /metrics), the server's CPU and the machine's
load average (1 minute: what else runs shows there). At the end, a verdict per figure: the last third of the
rows against the first third.
"""
import argparse
import json
import os
import random
import re
import statistics
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sse
from client import Client

parser = argparse.ArgumentParser()
parser.add_argument("base")
parser.add_argument("pid", type=int)
parser.add_argument("seed_folder")
parser.add_argument("--minutes", type=float, default=10)
parser.add_argument("--rate", type=float, default=200)
parser.add_argument("--clients", type=int, default=8)
parser.add_argument("--streams", type=int, default=40)
parser.add_argument("--interval", type=float, default=10)
options = parser.parse_args()
BASE = urllib.parse.urlparse(options.base)
PASSWORD = "482913"
PARTICIPANTS = 100
STOP = threading.Event()
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

sessions = [line.split() for line in open(os.path.join(options.seed_folder, "sessions.txt")).read().splitlines() if line]
friendly = open(os.path.join(options.seed_folder, "friendly.txt")).read().strip()


class Window:
    """The latencies and unexpected answers of the current interval, swapped out at each sample."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies, self.unexpected, self.kinds = [], 0, {}
        self.examples = []

    def note(self, kind, seconds, ok, answer):
        with self.lock:
            self.latencies.append(seconds)
            self.kinds.setdefault(CLASSES.get(kind, kind), []).append(seconds)
            if not ok:
                self.unexpected += 1
                if len(self.examples) < 5:
                    self.examples.append(f"{kind}: {answer[0] if answer else 'no answer'} {answer[2][:120] if answer else ''}")

    def take(self):
        with self.lock:
            taken = (self.latencies, self.unexpected, self.kinds, self.examples)
            self.latencies, self.unexpected, self.kinds, self.examples = [], 0, {}, []
            return taken


WINDOW = Window()
# The columns of latency besides all requests together: reads, position updates, and the vote app (ballots,
# and votes opened, whose password is hashed with bcrypt).
CLASSES = {"nearby": "reads", "closest": "reads", "friends": "reads", "friends nearby": "reads", "position": "positions",
           "ballot": "votes", "open vote": "votes"}


class Ballots:
    """The vote being filled: ballots go to it from people who have not voted in it; when it is full, the next
    person in line opens a new one."""

    def __init__(self):
        self.lock = threading.Lock()
        self.vote, self.voted, self.opener = None, set(), 0
        self.opened = 0
        self.cast = 0
        self.finished = 0

    def next_ballot(self, generator):
        with self.lock:
            if self.vote is None or len(self.voted) >= PARTICIPANTS:
                return None
            for _ in range(20):
                voter = generator.randrange(1, len(sessions))
                if voter not in self.voted and voter != self.opener:
                    self.voted.add(voter)
                    return self.vote, voter
            return None

    def open_next(self, client):
        with self.lock:
            if self.vote is not None and len(self.voted) < PARTICIPANTS:
                return
            self.opener = (self.opener + 1) % len(sessions)
            token, lat, lon = sessions[self.opener]
            body = {"subject": f"Soak vote {self.opened}", "options": ["Yes", "No", "Later"], "participants": PARTICIPANTS,
                    "password": PASSWORD, "duration": "15m", "lat": float(lat), "lon": float(lon)}
            started = time.monotonic()
            answer = client.send("POST", "/v1/votes", token, body)
            WINDOW.note("open vote", time.monotonic() - started, answer is not None and answer[0] == 201, answer)
            if answer is not None and answer[0] == 201:
                self.vote, self.voted = json.loads(answer[2])["id"], set()
                self.opened += 1


BALLOTS = Ballots()


def request(client, generator):
    roll = generator.random()
    if roll < 0.25:
        lat, lon = 33.77 + generator.random() * 0.02, -118.125 + generator.random() * 0.02
        return "nearby", client.send("GET", f"/v1/places/nearby?lat={lat:.6f}&lon={lon:.6f}&radius=1000&limit=20"), (200,)
    if roll < 0.45:
        lat, lon = 33.77 + generator.random() * 0.02, -118.125 + generator.random() * 0.02
        return "closest", client.send("GET", f"/v1/places/closest?lat={lat:.6f}&lon={lon:.6f}"), (200,)
    if roll < 0.55:
        token = friendly if generator.random() < 0.2 else sessions[generator.randrange(1, min(201, len(sessions)))][0]
        return "friends", client.send("GET", "/v1/friends", token), (200,)
    if roll < 0.60:
        token = friendly if generator.random() < 0.2 else sessions[generator.randrange(1, min(201, len(sessions)))][0]
        return "friends nearby", client.send("GET", "/v1/friends/nearby?radius=1000", token), (200,)
    if roll < 0.96:
        token, lat, lon = sessions[generator.randrange(len(sessions))]
        body = {"lat": float(lat) + generator.uniform(-5e-4, 5e-4), "lon": float(lon) + generator.uniform(-5e-4, 5e-4),
                "status": "On my way"}
        return "position", client.send("PUT", "/v1/me/position", token, body), (200,)
    chosen = BALLOTS.next_ballot(generator)
    if chosen is None:
        BALLOTS.open_next(client)
        chosen = BALLOTS.next_ballot(generator)
        if chosen is None:
            return None, None, None
    vote, voter = chosen
    answer = client.send("POST", f"/v1/votes/{vote}/ballots", sessions[voter][0], {"password": PASSWORD, "option": generator.randrange(3)})
    if answer is not None and answer[0] == 201:
        with BALLOTS.lock:
            BALLOTS.cast += 1
            if json.loads(answer[2])["vote"]["state"] != "open":
                BALLOTS.finished += 1
    # 409: the vote filled (or ran out of time) under a ballot sent at the same moment.
    return "ballot", answer, (201, 409)


def client_thread(number):
    client = Client(BASE.hostname, BASE.port, timeout=30)
    generator = random.Random(2026 + number)
    period = options.clients / options.rate
    due = time.monotonic() + generator.random() * period
    while not STOP.is_set():
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        due = max(due + period, time.monotonic() - 1.0)
        kind, answer, expected = request(client, generator)
        if kind is None:
            continue
        WINDOW.note(kind, client.seconds, answer is not None and answer[0] in expected, answer)


class Streams:
    def __init__(self):
        self.lock = threading.Lock()
        self.connects, self.events, self.notices, self.refused = 0, 0, 0, 0


STREAMS = Streams()


def stream_thread(number):
    """People among user00000 and their friends: connect, read for 5 to 60 s, leave, come back with the last id."""
    generator = random.Random(9000 + number)
    token = friendly if number % 10 == 0 else sessions[1 + number % min(200, len(sessions) - 1)][0]
    last_id = None
    while not STOP.is_set():
        stay = generator.uniform(5, 60)
        connection = None
        leave = None
        try:
            connection, response = sse.open_stream(BASE.hostname, BASE.port, token, last_id, timeout=90)
            if response.status != 200:
                response.read()
                with STREAMS.lock:
                    STREAMS.refused += 1
            else:
                with STREAMS.lock:
                    STREAMS.connects += 1
                # Left on time even when quiet: the socket is shut from a timer, which ends the read.
                leave = threading.Timer(stay, shut, args=(connection,))
                leave.start()
                for event_id, _, _ in sse.deliveries(response):
                    with STREAMS.lock:
                        if event_id:
                            last_id = event_id
                            STREAMS.events += 1
                        else:
                            STREAMS.notices += 1
                    if STOP.is_set():
                        break
        except (OSError, ValueError):
            pass
        finally:
            if leave is not None:
                leave.cancel()
            if connection is not None:
                connection.close()
        STOP.wait(generator.uniform(0.5, 3))


def shut(connection):
    try:
        if connection.sock is not None:
            connection.sock.shutdown(2)
    except OSError:
        pass


def server_sample(previous_cpu):
    status = open(f"/proc/{options.pid}/status").read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
    descriptors = len(os.listdir(f"/proc/{options.pid}/fd"))
    fields = open(f"/proc/{options.pid}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    metrics = {}
    answer = Client(BASE.hostname, BASE.port, timeout=10).send("GET", "/metrics")
    if answer is not None and answer[0] == 200:
        for line in answer[2].splitlines():
            for name in ("vicinity_connections_open", "vicinity_event_streams_open"):
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    metrics[name] = metrics.get(name, 0) + float(line.rsplit(" ", 1)[1])
    return rss, descriptors, threads, metrics, cpu


def slope(points):
    """The least-squares slope of (x, y) points; 0 for fewer than two."""
    if len(points) < 2:
        return 0.0
    mean_x = statistics.mean(x for x, _ in points)
    mean_y = statistics.mean(y for _, y in points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def main():
    threads = [threading.Thread(target=client_thread, args=(number,), daemon=True) for number in range(options.clients)]
    threads += [threading.Thread(target=stream_thread, args=(number,), daemon=True) for number in range(options.streams)]
    for thread in threads:
        thread.start()
    print(f"{options.clients} clients at {options.rate:.0f} requests/s in all, {options.streams} event streams coming and "
          f"going, {len(sessions)} people; a row every {options.interval:.0f} s for {options.minutes:g} min", flush=True)
    print("latencies in ms, as the clients saw them; p99 of all requests, then of reads, position updates and the vote app")
    print(f"{'t (s)':>6} {'req/s':>6} {'p50':>6} {'p99':>6} {'reads':>6} {'pos.':>6} {'votes':>6} {'errors':>6} {'RSS MiB':>8} "
          f"{'fds':>5} {'threads':>7} {'conns':>5} {'streams':>7} {'CPU %':>6} {'load':>5}", flush=True)
    rows = []
    started = time.monotonic()
    _, _, _, _, cpu_before = server_sample(0)
    next_at = started + options.interval
    examples = []
    while time.monotonic() - started < options.minutes * 60 - 1e-6:
        time.sleep(max(0.0, next_at - time.monotonic()))
        elapsed = time.monotonic() - started
        latencies, unexpected, kinds, found = WINDOW.take()
        examples += found
        try:
            rss, descriptors, thread_count, metrics, cpu = server_sample(cpu_before)
        except (FileNotFoundError, ProcessLookupError):
            sys.exit(f"the server (pid {options.pid}) is gone after {elapsed:.0f} s")
        cpu_percent = 100 * (cpu - cpu_before) / options.interval
        cpu_before = cpu
        row = {"t": elapsed, "rate": len(latencies) / options.interval, "p50": percentile(latencies, 0.5) * 1000,
               "p99": percentile(latencies, 0.99) * 1000, "errors": unexpected,
               "reads": percentile(kinds.get("reads", []), 0.99) * 1000,
               "positions": percentile(kinds.get("positions", []), 0.99) * 1000,
               "votes": percentile(kinds.get("votes", []), 0.99) * 1000, "rss": rss, "fds": descriptors,
               "threads": thread_count, "conns": metrics.get("vicinity_connections_open", float("nan")),
               "streams": metrics.get("vicinity_event_streams_open", float("nan")), "cpu": cpu_percent,
               "load": float(open("/proc/loadavg").read().split()[0])}
        rows.append(row)
        print(f"{row['t']:6.0f} {row['rate']:6.0f} {row['p50']:6.1f} {row['p99']:6.1f} {row['reads']:6.1f} {row['positions']:6.1f} "
              f"{row['votes']:6.1f} {row['errors']:6d} {row['rss']:8.1f} "
              f"{row['fds']:5d} {row['threads']:7d} {row['conns']:5.0f} {row['streams']:7.0f} {row['cpu']:6.0f} {row['load']:5.1f}", flush=True)
        next_at += options.interval
    STOP.set()

    third = max(1, len(rows) // 3)
    first, last = rows[:third], rows[-third:]
    print(f"\nfirst third ({len(first)} rows) against last third ({len(last)} rows), means, and the trend within the last third:")
    verdicts = []
    # Flat: memory within 10% (and 8 MiB, the allocator's own swings), descriptors and threads within 10% plus a
    # few (streams come and go), p99 within 50% plus 2 ms (a shared machine). A figure past that which no
    # longer rises within the last third (its least-squares slope per minute under LEVEL) levelled off: a
    # cache or a pool filled, not a leak, which goes on rising.
    for name, label, unit, relative, absolute, level in (
            ("rss", "resident memory", "MiB", 0.10, 8.0, 0.5), ("fds", "open descriptors", "", 0.10, 5.0, 0.5),
            ("threads", "threads", "", 0.10, 2.0, 0.2), ("p99", "p99 latency", "ms", 0.50, 2.0, None),
            ("reads", "p99 of reads", "ms", 0.50, 2.0, None)):
        before = statistics.mean(row[name] for row in first)
        after = statistics.mean(row[name] for row in last)
        trend = slope([(row["t"] / 60, row[name]) for row in last])
        if level is None:
            level = 0.05 * after  # latency: 5% of itself a minute
        if after <= before * (1 + relative) + absolute:
            verdict = "flat"
        elif trend < level:
            verdict = "levelled off"
        else:
            verdict = "GROWS"
        verdicts.append(verdict != "GROWS")
        change = (after - before) / before * 100 if before else 0
        print(f"  {label:17} {before:9.1f} -> {after:9.1f} {unit:3} ({change:+.1f}%), {trend:+.2f} {unit or 'a'} a minute at the end: {verdict}")
    print(f"  {'(machine load':17} {statistics.mean(row['load'] for row in first):9.1f} -> "
          f"{statistics.mean(row['load'] for row in last):9.1f}     what else ran on the machine)")
    requests = sum(row["rate"] * options.interval for row in rows)
    errors = sum(row["errors"] for row in rows)
    with STREAMS.lock:
        print(f"requests {requests:.0f}, unexpected answers {errors}; votes opened {BALLOTS.opened}, finished by their last "
              f"ballot {BALLOTS.finished}, ballots counted {BALLOTS.cast}; streams connected {STREAMS.connects} times, "
              f"refused {STREAMS.refused}, read {STREAMS.events} events and {STREAMS.notices} friend_moved notices")
    for example in examples[:5]:
        print("  unexpected: " + example)
    print("verdict: " + ("memory, descriptors, threads and p99 stay level (flat or levelled off)" if all(verdicts)
                         else "NOT flat: a figure goes on rising (see above)"))
    return 0 if all(verdicts) and errors == 0 else 1


sys.exit(main())
