#!/usr/bin/env python3
"""Checks a running cluster (Scripts/cluster.sh) through its load balancer, as clients would use it.

    Scripts/check/cluster.py BASE_URL FOLDER [TLS_BASE_URL CA_FILE]

1. Two people sign up and become friends through nginx, whose round robin sends their requests to both
   fronts. One opens an event stream; the other pokes them ten times: every poke must arrive, once, in order.
2. One shares a position ten times; after each, the friend's list must show it within the bound, asked
   through nginx (so from both fronts in turn).
3. With TLS_BASE_URL (nginx terminating TLS, its certificate in CA_FILE): HTTP/2 is chosen by ALPN, answers over
   TLS carry Strict-Transport-Security and plain ones do not, and an event stream read over TLS gets the pokes
   sent over TLS.
4. One front is killed with SIGKILL under a stream client: the client reconnects through nginx with its
   Last-Event-ID and gets the pokes sent meanwhile, none lost, none twice; requests keep being answered.
Exits non-zero on any failure, printing what it saw.
"""
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request

# The stream reader is shared with the fault check and the friends benchmark, in Scripts/lib.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sse

BASE, FOLDER = sys.argv[1], sys.argv[2]
PARSED = urllib.parse.urlparse(BASE)
TLS_BASE, CA_FILE = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else (None, None)
# How long a write may take to show on the other front: the follower reads at least every second; ten on a
# busy machine is far past any lag the check means to catch.
BOUND_S = 10.0


RETRIED = []


def call(method, path, token=None, body=None, expect=(200, 201, 204), base=BASE, tls=None):
    """One request to BASE (over TLS with the ssl.SSLContext TLS); a 502, 503 or 504 (a front going away under
    it) is tried again, as a client would, up to five times. Each retry is noted: a retried write may have been
    done twice."""
    for attempt in range(6):
        status, text, _ = send(method, path, token, body, base, tls)
        if status not in (502, 503, 504) or attempt == 5:
            break
        RETRIED.append(f"{method} {path}: {status}")
        time.sleep(0.2)
    if status not in expect:
        sys.exit(f"{method} {path}: {status} {text}")
    return json.loads(text) if text else None


def send(method, path, token, body, base=BASE, tls=None):
    """The status, text and headers of one answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=30, context=tls) as response:
            return response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), error.headers


def person(name, base=BASE, tls=None):
    password = "correct horse battery"
    account = call("POST", "/v1/users", body={"username": name, "password": password, "first_name": name.title(), "last_name": "Test"},
                   base=base, tls=tls)
    signed_in = call("POST", "/v1/sessions", body={"username": name, "password": password}, base=base, tls=tls)
    return account["id"], signed_in["token"]


class Stream(threading.Thread):
    """An event stream read in the background: the ids and types of the events, in order."""

    def __init__(self, token, last_event_id=None, base=PARSED, tls=None):
        super().__init__(daemon=True)
        self.token, self.last_event_id = token, last_event_id
        self.base, self.tls = base, tls
        self.events, self.ended, self.answered = [], threading.Event(), threading.Event()
        self.connection = None

    def run(self):
        try:
            self.connection, response = sse.open_stream(
                self.base.hostname, self.base.port, self.token, self.last_event_id, timeout=90, tls=self.tls)
            if response.status != 200:
                return
            # The stream is open once its head has come: events from here on reach it.
            self.answered.set()
            for event in sse.events(response):
                self.events.append(event)
        except OSError:
            return
        finally:
            self.ended.set()

    def wait_for(self, count, timeout=30):
        """Waits until the stream has COUNT pokes, ends, or TIMEOUT passes; says whether it has them."""
        deadline = time.time() + timeout
        while len(pokes(self)) < count and time.time() < deadline and not self.ended.is_set():
            time.sleep(0.02)
        return len(pokes(self)) >= count


def pokes(stream):
    return [event_id for event_id, kind in stream.events if kind == "poke"]


def friends_of(ben_id, ben, prefix, count):
    """COUNT new people, each a friend of Ben's: pokes are limited per pair (3 in 10 minutes), so each
    pokes twice."""
    people = []
    for index in range(count):
        person_id, token = person(f"{prefix}{index}")
        request = call("POST", "/v1/friend-requests", token, {"to": ben_id})
        call("POST", f"/v1/friend-requests/{request['id']}/accept", ben)
        people.append((person_id, token))
    return people


def poke_twice_each(people, ben_id):
    answered = 0
    for _ in range(2):
        for _, token in people:
            call("POST", f"/v1/friends/{ben_id}/pokes", token)
            answered += 1
    return answered


def over_tls(stamp):
    """3. nginx terminating TLS in front of the same fronts, as a browser meets it."""
    tls = ssl.create_default_context(cafile=CA_FILE)
    parsed = urllib.parse.urlparse(TLS_BASE)
    offered = ssl.create_default_context(cafile=CA_FILE)
    offered.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection((parsed.hostname, parsed.port), timeout=30) as raw:
        with offered.wrap_socket(raw, server_hostname=parsed.hostname) as connection:
            chosen, version = connection.selected_alpn_protocol(), connection.version()
    if chosen != "h2":
        sys.exit(f"tls: ALPN chose {chosen!r}, not h2")
    _, _, headers = send("GET", "/health", None, None, TLS_BASE, tls)
    if headers.get("Strict-Transport-Security") != "max-age=63072000":
        sys.exit(f"tls: Strict-Transport-Security over TLS is {headers.get('Strict-Transport-Security')!r}")
    _, _, headers = send("GET", "/health", None, None)
    if headers.get("Strict-Transport-Security") is not None:
        sys.exit("tls: a plain answer carries Strict-Transport-Security")
    carol_id, carol = person("carol" + stamp, TLS_BASE, tls)
    dan_id, dan = person("dan" + stamp, TLS_BASE, tls)
    request = call("POST", "/v1/friend-requests", carol, {"to": dan_id}, base=TLS_BASE, tls=tls)
    call("POST", f"/v1/friend-requests/{request['id']}/accept", dan, base=TLS_BASE, tls=tls)
    stream = Stream(dan, base=parsed, tls=tls)
    stream.start()
    if not stream.answered.wait(30):
        sys.exit("tls: the event stream over TLS was not answered within 30 s")
    for _ in range(2):
        call("POST", f"/v1/friends/{dan_id}/pokes", carol, base=TLS_BASE, tls=tls)
    if not stream.wait_for(2):
        sys.exit(f"tls: {len(pokes(stream))} of 2 pokes arrived on a stream read over TLS: {stream.events}")
    print(f"tls: {version} with HTTP/2 chosen by ALPN, Strict-Transport-Security over TLS only, "
          "2 pokes sent over TLS arrived on a stream read over TLS")


def main():
    stamp = str(int(time.time() * 1000))[-7:]
    anna_id, anna = person("anna" + stamp)
    ben_id, ben = person("ben" + stamp)
    request = call("POST", "/v1/friend-requests", anna, {"to": ben_id})
    call("POST", f"/v1/friend-requests/{request['id']}/accept", ben)

    # 1. Events made through both fronts reach one stream, each once, in order.
    first = friends_of(ben_id, ben, "p" + stamp, 5)
    stream = Stream(ben)
    stream.start()
    time.sleep(0.5)
    poke_twice_each(first, ben_id)
    if not stream.wait_for(10):
        sys.exit(f"events: {len(pokes(stream))} of 10 pokes arrived: {stream.events}")
    ids = [int(event_id) for event_id in pokes(stream)]
    if ids != sorted(ids) or len(set(ids)) != 10:
        sys.exit(f"events out of order or repeated: {ids}")
    print("events: 10 pokes sent through both fronts arrived once each, in order")

    # 2. Positions written through one front show through the other.
    lags = []
    for index in range(10):
        status = f"step {index}"
        sent = time.time()
        call("PUT", "/v1/me/position", anna, {"lat": 33.7790 + index * 0.0001, "lon": -118.1125, "status": status})
        while True:
            friends = call("GET", "/v1/friends", ben)["friends"]
            if any(friend.get("status") == status for friend in friends):
                lags.append(time.time() - sent)
                break
            if time.time() - sent > BOUND_S:
                sys.exit(f"positions: step {index} not visible through nginx within {BOUND_S} s")
            time.sleep(0.01)
    print(f"positions: 10 updates visible through nginx, slowest after {max(lags) * 1000:.0f} ms")

    if TLS_BASE:
        over_tls(stamp)

    # 4. A front killed under a stream client: the client resumes through the other, nothing lost.
    second = friends_of(ben_id, ben, "q" + stamp, 5)
    fronts = [line.split() for line in open(os.path.join(FOLDER, "fronts")).read().splitlines()]
    os.kill(int(fronts[0][0]), signal.SIGKILL)
    answered = poke_twice_each(second, ben_id)
    if stream.wait_for(20, timeout=10):
        seen = pokes(stream)
    else:
        # The stream was on the killed front: resume from the last id it read, as a client does.
        resumed = Stream(ben, last_event_id=stream.events[-1][0])
        resumed.start()
        resumed.wait_for(20 - len(pokes(stream)))
        seen = pokes(stream) + pokes(resumed)
    ids = [int(event_id) for event_id in seen]
    # A retried poke may have been done by the dying front too: at most one more event per retry.
    if not 20 <= len(ids) <= 20 + len(RETRIED) or len(set(ids)) != len(ids) or ids != sorted(ids):
        sys.exit(f"failover: expected the 20 acknowledged pokes once each in order, saw {ids}")
    print(f"failover: front {fronts[0][1]} killed with SIGKILL; {answered} pokes acknowledged after it "
          f"({len(RETRIED)} retried after a 502/503 from the dying front); the stream has {len(ids)} pokes, "
          f"each once, in order")


main()
