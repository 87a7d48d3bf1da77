#!/usr/bin/env python3
"""Crash rounds against one Vicinity server, as its clients see them (Scripts/check/crash.sh starts it).

    crash.py --vicinity BIN --db DATABASE --port PORT --work FOLDER --sessions FILE
             [--server-kills N] [--postgres-kills M] [--postgres SCRIPT] [--seconds MIN MAX] [--writers W] [--seed S]

The people of FILE (vicinity-seed's sessions.txt) each hold an event stream, resumed with Last-Event-ID after
every cut as a browser's EventSource does, and W client threads write for them at full pace: position updates,
friend requests, accepts and friendships ended (and asked for again), pokes, votes opened, ballots and vote
closes. Each round, after MIN to MAX seconds of that, the server is killed with SIGKILL and started again (N
rounds), or PostgreSQL is killed with `SCRIPT crash` (pg_ctl stop -m immediate) and started again under the
running server (M rounds). After each round the writers pause and everything is read back through the API
(each person's export, and the streams):

- every acknowledged write is there: each person's last acknowledged position (or one sent after it that got
  no answer), each friend request and accept, each friendship ended, each ballot with its choice, each vote
  opened, each close;
- every event is there exactly once: a friend_request for each request, a friend_accepted each time two
  became friends, each acknowledged poke (matched by its time) and no more pokes than were sent, one
  vote_finished per finished vote for its initiator and each voter and none for a vote still open; each
  stream read every event of the export once, in order, across all the kills;
- nothing is half done: no friendship on one side only, no request seen by one side only, no finished vote
  without its events, no event without what it announces, no vote whose count differs from its ballots;
- on SpatiaLite, while the server is down after each kill: PRAGMA integrity_check, rtreecheck and
  CheckSpatialIndex of every R*Tree (the spatialite shell); over PostgreSQL, no friendship row without its
  reverse.

A write that got no answer (the server died under it, or answered 503 while PostgreSQL was down) may or may
not have been done: either is accepted, and what it did is then held to the same rules. Prints one line per
round and the totals; exits 1 on any loss, duplicate or half-done change.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sse
from client import Client

parser = argparse.ArgumentParser()
parser.add_argument("--vicinity", required=True)
parser.add_argument("--db", required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--sessions", required=True)
parser.add_argument("--server-kills", type=int, default=3)
parser.add_argument("--postgres-kills", type=int, default=0)
parser.add_argument("--postgres", default=None, help="Scripts/postgres.sh, with VICINITY_PG_DIR and VICINITY_PG_PORT set")
parser.add_argument("--seconds", type=float, nargs=2, default=(2.0, 5.0))
parser.add_argument("--writers", type=int, default=8)
parser.add_argument("--seed", type=int, default=None)
options = parser.parse_args()
SEED = options.seed if options.seed is not None else random.randrange(1 << 30)
RANDOM = random.Random(SEED)
HOST = "127.0.0.1"
SPATIALITE = not options.db.startswith("postgres")
PASSWORD = "482913"
KINDS = ["positions", "requests", "accepts", "unfriends", "pokes", "votes", "ballots", "closes"]
DEADLINE_START = 90  # seconds for the server to answer /health after a start
DEADLINE_CHECK = 30  # seconds for the announcer and the streams to catch up after a round


def log(text):
    print(text, flush=True)


# --- The server --------------------------------------------------------------------------------------------

class Server:
    """`vicinity serve` on the port, logging to the work folder; its pid in server.pid for the script's trap."""

    def __init__(self):
        self.process = None
        self.log = open(os.path.join(options.work, "server.log"), "ab")
        self.client = Client(HOST, options.port, timeout=5)

    def start(self):
        self.process = subprocess.Popen(
            [options.vicinity, "serve", "--port", str(options.port), "--db", options.db, "--log-level", "warning"],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        with open(os.path.join(options.work, "server.pid"), "w") as handle:
            handle.write(str(self.process.pid))
        started = time.monotonic()
        while time.monotonic() - started < DEADLINE_START:
            if self.process.poll() is not None:
                sys.exit(f"the server exited with status {self.process.returncode} at start; see {options.work}/server.log")
            if self.healthy():
                return time.monotonic() - started
            time.sleep(0.1)
        sys.exit(f"the server did not answer /health within {DEADLINE_START} s")

    def healthy(self):
        answer = self.client.send("GET", "/health")
        return answer is not None and answer[0] == 200

    def wait_healthy(self):
        started = time.monotonic()
        while time.monotonic() - started < DEADLINE_START:
            if self.healthy():
                return time.monotonic() - started
            time.sleep(0.1)
        sys.exit(f"the server did not answer /health within {DEADLINE_START} s of PostgreSQL starting again")

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        try:
            os.remove(os.path.join(options.work, "server.pid"))
        except FileNotFoundError:
            pass


# --- What was asked and what was answered ------------------------------------------------------------------

class Person:
    def __init__(self, index, token):
        self.index, self.token, self.id = index, token, None
        self.position_acknowledged = "Studying"  # what vicinity-seed gave everyone
        self.position_maybe = set()
        self.votes_opened = 0
        self.stream = None


class Pair:
    """A friendship asked by `a` of `b`, again after each time it ends: 'none' (not asked, or ended), 'asked?'
    (asked, no answer), 'pending' (its id known), 'accepting?' (accepted, no answer), 'friends', 'ending?'
    (ended, no answer). `request_ids` holds every request known to have been made, `accepted` how many times
    they became friends."""

    def __init__(self, a, b):
        self.a, self.b = a, b
        self.state = "none"
        self.request_id = None
        self.request_ids = []
        self.accepted = 0
        self.request_acknowledged = False
        self.accept_acknowledged = False
        self.unfriend_acknowledged = False


class Poking:
    """Pokes from one person to a friend: the `at` of each acknowledged one, and how many got no answer."""

    def __init__(self):
        self.acknowledged, self.maybe, self.spent = [], 0, False


class TrackedVote:
    def __init__(self, vote_id, initiator, participants, acknowledged):
        self.id, self.initiator, self.participants = vote_id, initiator, participants
        self.acknowledged = acknowledged  # opened with an answer (else found in its initiator's export)
        self.ballots = {}  # voter index -> option, acknowledged
        self.ballots_maybe = {}  # voter index -> option, no answer yet
        self.ballots_found = {}  # voter index -> option, unanswered but found
        self.close = "none"  # 'acknowledged', 'maybe'
        self.open = True


LOCK = threading.Lock()
PEOPLE = []
PAIRS = []
POKES = {}  # (from index, to index) -> Poking
VOTES = {}  # vote id -> TrackedVote
FAILURES = []  # answers that break the contract (a 500, a 400 to a valid request, ...)
ROUND = {"acknowledged": {}, "maybe": {}}
TOTAL = {"acknowledged": {}, "maybe": {}, "lost": set(), "duplicated": set(), "half_done": set()}  # findings, each once
RUN = threading.Event()
STOP = threading.Event()


def count(bucket, kind):
    with LOCK:
        ROUND[bucket][kind] = ROUND[bucket].get(kind, 0) + 1


def unexpected(what, answer):
    with LOCK:
        FAILURES.append(f"{what}: {answer[0]} {answer[2][:200]}")


# --- Writers ----------------------------------------------------------------------------------------------

def writer(number, idle):
    client = Client(HOST, options.port, timeout=30)
    generator = random.Random(SEED * 31 + number)
    mine = [person for person in PEOPLE if person.index % options.writers == number]
    sequence = 0
    while not STOP.is_set():
        if not RUN.is_set():
            idle.set()
            RUN.wait(1)
            continue
        idle.clear()
        person = generator.choice(mine)
        sequence += 1
        answer = choose(person, generator)(client, person, generator, f"w{number}-{sequence}")
        if answer is SKIP:
            answer = position(client, person, generator, f"w{number}-{sequence}")
        if answer is None and client.refused:
            time.sleep(0.1)  # the server is down: nothing was sent
        elif answer is not None and answer[0] == 503:
            time.sleep(min(1.0, float(answer[1].get("Retry-After", "1"))))
    idle.set()


def choose(person, generator):
    roll = generator.random()
    if roll < 0.10:
        return friend_request
    if roll < 0.20:
        return accept
    if roll < 0.27:
        return poke
    if roll < 0.30:
        return unfriend
    if roll < 0.36:
        return open_vote
    if roll < 0.56:
        return ballot
    if roll < 0.60:
        return close_vote
    return position


SKIP = object()  # what an action answers when it has nothing to do for that person now


def unanswered(answer):
    """No answer or a 503: the write may have been done."""
    return answer is None or answer[0] in (502, 503, 504)


def position(client, person, generator, tag):
    body = {"lat": 33.7775 + generator.uniform(0, 0.005), "lon": -118.1145 + generator.uniform(0, 0.005), "status": tag}
    with LOCK:
        person.position_maybe.add(tag)
    answer = client.send("PUT", "/v1/me/position", person.token, body)
    if answer is None and client.refused:
        with LOCK:
            person.position_maybe.discard(tag)
        return answer
    if unanswered(answer):
        count("maybe", "positions")
    elif answer[0] == 200:
        with LOCK:
            person.position_acknowledged = tag
            person.position_maybe = set()
        count("acknowledged", "positions")
    else:
        with LOCK:
            person.position_maybe.discard(tag)
        unexpected("PUT /v1/me/position", answer)
    return answer


def friend_request(client, person, generator, tag):
    with LOCK:
        pairs = [pair for pair in PAIRS if pair.a is person and pair.state == "none"]
        if not pairs:
            return SKIP
        pair = generator.choice(pairs)
        pair.state = "asked?"
    answer = client.send("POST", "/v1/friend-requests", person.token, {"to": pair.b.id})
    with LOCK:
        if answer is None and client.refused:
            pair.state = "none"
        elif unanswered(answer):
            ROUND["maybe"]["requests"] = ROUND["maybe"].get("requests", 0) + 1
        elif answer[0] == 201:
            pair.state, pair.request_id, pair.request_acknowledged = "pending", json.loads(answer[2])["id"], True
            pair.request_ids.append(pair.request_id)
            pair.accept_acknowledged = pair.unfriend_acknowledged = False
            ROUND["acknowledged"]["requests"] = ROUND["acknowledged"].get("requests", 0) + 1
        else:
            pair.state = "none"
            FAILURES.append(f"POST /v1/friend-requests: {answer[0]} {answer[2][:200]}")
    return answer


def accept(client, person, generator, tag):
    with LOCK:
        pairs = [pair for pair in PAIRS if pair.b is person and pair.state == "pending"]
        if not pairs:
            return SKIP
        pair = generator.choice(pairs)
        pair.state = "accepting?"
    answer = client.send("POST", f"/v1/friend-requests/{pair.request_id}/accept", person.token)
    with LOCK:
        if answer is None and client.refused:
            pair.state = "pending"
        elif unanswered(answer):
            ROUND["maybe"]["accepts"] = ROUND["maybe"].get("accepts", 0) + 1
        elif answer[0] == 200:
            pair.state, pair.accept_acknowledged, pair.accepted = "friends", True, pair.accepted + 1
            ROUND["acknowledged"]["accepts"] = ROUND["acknowledged"].get("accepts", 0) + 1
        else:
            pair.state = "pending"
            FAILURES.append(f"POST accept: {answer[0]} {answer[2][:200]}")
    return answer


def unfriend(client, person, generator, tag):
    with LOCK:
        pairs = [pair for pair in PAIRS if pair.state == "friends" and person in (pair.a, pair.b)]
        if not pairs:
            return SKIP
        pair = generator.choice(pairs)
        pair.state = "ending?"
    other = pair.b if pair.a is person else pair.a
    answer = client.send("DELETE", f"/v1/friends/{other.id}", person.token)
    with LOCK:
        if answer is None and client.refused:
            pair.state = "friends"
        elif unanswered(answer):
            ROUND["maybe"]["unfriends"] = ROUND["maybe"].get("unfriends", 0) + 1
        elif answer[0] == 204:
            pair.state, pair.unfriend_acknowledged = "none", True
            pair.request_acknowledged = pair.accept_acknowledged = False
            ROUND["acknowledged"]["unfriends"] = ROUND["acknowledged"].get("unfriends", 0) + 1
        else:
            pair.state = "friends"
            FAILURES.append(f"DELETE /v1/friends: {answer[0]} {answer[2][:200]}")
    return answer


def poke(client, person, generator, tag):
    with LOCK:
        choices = []
        for pair in PAIRS:
            if pair.state == "friends" and person in (pair.a, pair.b):
                other = pair.b if pair.a is person else pair.a
                poking = POKES.setdefault((person.index, other.index), Poking())
                if not poking.spent and len(poking.acknowledged) + poking.maybe < 3:
                    choices.append((other, poking, pair))
        if not choices:
            return SKIP
        other, poking, pair = generator.choice(choices)
        poking.maybe += 1
    answer = client.send("POST", f"/v1/friends/{other.id}/pokes", person.token)
    with LOCK:
        if answer is None and client.refused:
            poking.maybe -= 1
        elif unanswered(answer):
            ROUND["maybe"]["pokes"] = ROUND["maybe"].get("pokes", 0) + 1
        elif answer[0] == 201:
            poking.maybe -= 1
            poking.acknowledged.append(json.loads(answer[2])["at"])
            ROUND["acknowledged"]["pokes"] = ROUND["acknowledged"].get("pokes", 0) + 1
        elif answer[0] == 429:
            poking.maybe -= 1
            poking.spent = True  # three in ten minutes, some of them unanswered
        elif answer[0] == 404 and pair.state != "friends":
            poking.maybe -= 1  # the other ended the friendship meanwhile
        else:
            poking.maybe -= 1
            FAILURES.append(f"POST pokes: {answer[0]} {answer[2][:200]}")
    return answer


def open_vote(client, person, generator, tag):
    with LOCK:
        mine_open = [vote for vote in VOTES.values() if vote.initiator is person and vote.open]
        if len(mine_open) >= 2 or person.votes_opened >= 20:
            return SKIP
        person.votes_opened += 1
    participants = generator.randint(2, 5)
    body = {"subject": f"Crash check {tag}", "options": ["Yes", "No", "Later"], "participants": participants,
            "password": PASSWORD, "duration": generator.choice(["permanent", "permanent", "5m"]),
            "lat": 33.7775 + generator.uniform(0, 0.005), "lon": -118.1145 + generator.uniform(0, 0.005)}
    answer = client.send("POST", "/v1/votes", person.token, body)
    with LOCK:
        if answer is None and client.refused:
            person.votes_opened -= 1
        elif unanswered(answer):
            ROUND["maybe"]["votes"] = ROUND["maybe"].get("votes", 0) + 1
        elif answer[0] == 201:
            vote_id = json.loads(answer[2])["id"]
            VOTES[vote_id] = TrackedVote(vote_id, person, participants, True)
            ROUND["acknowledged"]["votes"] = ROUND["acknowledged"].get("votes", 0) + 1
        else:
            FAILURES.append(f"POST /v1/votes: {answer[0]} {answer[2][:200]}")
    return answer


def ballot(client, person, generator, tag):
    with LOCK:
        votes = [vote for vote in VOTES.values()
                 if vote.open and vote.initiator is not person and person.index not in vote.ballots
                 and person.index not in vote.ballots_maybe and person.index not in vote.ballots_found
                 and len(vote.ballots) + len(vote.ballots_maybe) + len(vote.ballots_found) < vote.participants]
        if not votes:
            return SKIP
        vote = generator.choice(votes)
        option = generator.randrange(3)
        vote.ballots_maybe[person.index] = option
    answer = client.send("POST", f"/v1/votes/{vote.id}/ballots", person.token, {"password": PASSWORD, "option": option})
    with LOCK:
        if answer is None and client.refused:
            del vote.ballots_maybe[person.index]
        elif unanswered(answer):
            ROUND["maybe"]["ballots"] = ROUND["maybe"].get("ballots", 0) + 1
        elif answer[0] == 201:
            del vote.ballots_maybe[person.index]
            vote.ballots[person.index] = option
            body = json.loads(answer[2])
            if body["vote"]["state"] != "open":
                vote.open = False
            ROUND["acknowledged"]["ballots"] = ROUND["acknowledged"].get("ballots", 0) + 1
        elif answer[0] == 409:
            # Voting ended meanwhile (a close, the last ballot or the time): not a ballot.
            del vote.ballots_maybe[person.index]
            vote.open = False
        else:
            del vote.ballots_maybe[person.index]
            FAILURES.append(f"POST ballots: {answer[0]} {answer[2][:200]}")
    return answer


def close_vote(client, person, generator, tag):
    with LOCK:
        votes = [vote for vote in VOTES.values() if vote.initiator is person and vote.open and vote.close == "none"]
        if not votes:
            return SKIP
        vote = generator.choice(votes)
        vote.close = "maybe"
    answer = client.send("POST", f"/v1/votes/{vote.id}/close", person.token)
    with LOCK:
        if answer is None and client.refused:
            vote.close = "none"
        elif unanswered(answer):
            ROUND["maybe"]["closes"] = ROUND["maybe"].get("closes", 0) + 1
        elif answer[0] == 200:
            vote.close, vote.open = "acknowledged", False
            ROUND["acknowledged"]["closes"] = ROUND["acknowledged"].get("closes", 0) + 1
        elif answer[0] == 409:
            vote.close, vote.open = "none", False  # it had ended already
        else:
            vote.close = "none"
            FAILURES.append(f"POST close: {answer[0]} {answer[2][:200]}")
    return answer


# --- Event streams ----------------------------------------------------------------------------------------

class Stream(threading.Thread):
    """A person's event stream from the first event on (Last-Event-ID 0), resumed with the last id read
    whenever it ends; keeps every event read, in order."""

    def __init__(self, person):
        super().__init__(daemon=True)
        self.person = person
        self.events = []  # (id, type)
        self.last_id = "0"
        self.connection = None
        self.opened = 0

    def run(self):
        while not STOP.is_set():
            try:
                self.connection, response = sse.open_stream(HOST, options.port, self.person.token, self.last_id, timeout=60)
                if response.status == 200:
                    self.opened += 1
                    for event_id, kind, _ in sse.records(response):
                        self.events.append((int(event_id), kind))
                        self.last_id = event_id
                else:
                    response.read()
            except Exception:
                pass
            if not STOP.is_set():
                time.sleep(0.2)

    def stop(self):
        connection = self.connection
        if connection is not None and connection.sock is not None:
            try:
                connection.sock.shutdown(2)
            except OSError:
                pass


# --- Reading everything back ------------------------------------------------------------------------------

class Findings:
    def __init__(self):
        self.lost, self.duplicated, self.half_done, self.other = [], [], [], []

    def all(self):
        return self.lost + self.duplicated + self.half_done + self.other


def exports(client):
    found = {}
    for person in PEOPLE:
        answer = client.json("GET", "/v1/me/export", person.token)
        if answer is None or answer[0] != 200:
            return None
        found[person.index] = answer[1]
    return found


def check(client):
    """Reads everything back and holds it to the rules. Returns the findings, the number of events listed and
    what to take as the new belief once nothing is wrong (what unanswered writes turned out to have done), or
    None when the server did not answer."""
    data = exports(client)
    if data is None:
        return None
    findings = Findings()
    adoptions = []
    by_id = {person.id: person for person in PEOPLE}
    events = {person.index: data[person.index]["events"] for person in PEOPLE}
    for person in PEOPLE:
        ids = [int(event["id"]) for event in events[person.index]]
        if len(set(ids)) != len(ids):
            findings.duplicated.append(f"{person.index}: an event listed twice")

    # Positions.
    for person in PEOPLE:
        shown = (data[person.index]["position"] or {}).get("status")
        if shown != person.position_acknowledged and shown not in person.position_maybe:
            findings.lost.append(f"position of {person.index}: shows {shown!r}, acknowledged {person.position_acknowledged!r}")
        else:
            adoptions.append(lambda person=person, shown=shown: (setattr(person, "position_acknowledged", shown),
                                                                  setattr(person, "position_maybe", set())))

    # Friendships and requests, both sides.
    friends = {person.index: {friend["id"] for friend in data[person.index]["friends"]} for person in PEOPLE}
    incoming = {person.index: {} for person in PEOPLE}
    outgoing = {person.index: {} for person in PEOPLE}
    for person in PEOPLE:
        for request in data[person.index]["friend_requests"]:
            if request["to"]["id"] == person.id:
                incoming[person.index][request["from"]["id"]] = request["id"]
            if request["from"]["id"] == person.id:
                outgoing[person.index][request["to"]["id"]] = request["id"]
    for person in PEOPLE:
        for friend in friends[person.index]:
            if friend not in by_id or person.id not in friends[by_id[friend].index]:
                findings.half_done.append(f"friendship of {person.index} with {friend} on one side only")
        for other, request in outgoing[person.index].items():
            if other not in by_id or incoming[by_id[other].index].get(person.id) != request:
                findings.half_done.append(f"request {request} seen by its sender {person.index} only")
    for pair in PAIRS:
        a, b = pair.a, pair.b
        are_friends = b.id in friends[a.index]
        pending = incoming[b.index].get(a.id)
        if incoming[a.index].get(b.id):
            findings.other.append(f"a request from {b.index} to {a.index} that nobody sent")
        if pair.state == "friends" and not are_friends:
            findings.lost.append(f"friendship {a.index}-{b.index}: " + ("accepted" if pair.accept_acknowledged else "seen before") + ", not there")
        elif pair.state == "pending" and not pending:
            findings.lost.append(f"request {pair.request_id} of {a.index} to {b.index}: "
                                 + ("acknowledged" if pair.request_acknowledged else "seen before") + ", not there")
        elif pair.state == "accepting?" and not (are_friends or pending):
            findings.lost.append(f"request {pair.request_id} of {a.index} to {b.index}: neither pending nor accepted")
        if are_friends and pair.state not in ("accepting?", "friends", "ending?"):
            if pair.unfriend_acknowledged:
                findings.lost.append(f"friendship {a.index}-{b.index}: ended (acknowledged), still there")
            else:
                findings.other.append(f"friendship {a.index}-{b.index} that nobody accepted")
        if pending and pair.state not in ("asked?", "pending", "accepting?"):
            findings.other.append(f"request of {a.index} to {b.index} that nobody sent")
        if pending and pair.request_id and pair.state != "asked?" and pending != pair.request_id:
            findings.other.append(f"request of {a.index} to {b.index}: {pending}, known {pair.request_id}")
        # Every request ever made between them has its one friend_request event, and there is no other.
        made = set(pair.request_ids) | ({pending} if pending else set())
        asked = [event["request_id"] for event in events[b.index] if event["type"] == "friend_request" and event["from"]["id"] == a.id]
        for request_id in made:
            if asked.count(request_id) == 0:
                findings.half_done.append(f"request {request_id} of {a.index} to {b.index} without its friend_request event")
            elif asked.count(request_id) > 1:
                findings.duplicated.append(f"request {request_id}: {asked.count(request_id)} friend_request events")
        strays = [request_id for request_id in asked if request_id not in made]
        if strays:
            findings.half_done.append(f"{len(strays)} friend_request events of {a.index} to {b.index} for no request there")
        # One friend_accepted for each time they became friends.
        formed = pair.accepted + (1 if pair.state == "accepting?" and are_friends else 0)
        accepted = [event for event in events[a.index] if event["type"] == "friend_accepted" and event["friend"]["id"] == b.id]
        if len(accepted) < formed:
            findings.half_done.append(f"friendship {a.index}-{b.index} formed {formed} times, {len(accepted)} friend_accepted events")
        elif len(accepted) > formed:
            findings.duplicated.append(f"friendship {a.index}-{b.index} formed {formed} times, {len(accepted)} friend_accepted events")
        adoptions.append(lambda pair=pair, pending=pending, are_friends=are_friends: adopt_pair(pair, pending, are_friends))

    # Pokes, matched by their time.
    for (sender, recipient), poking in POKES.items():
        sender_id = PEOPLE[sender].id
        times = [event["at"] for event in events[recipient] if event["type"] == "poke" and event["from"]["id"] == sender_id]
        for at in poking.acknowledged:
            if times.count(at) == 0:
                findings.lost.append(f"poke of {sender} to {recipient} at {at}: acknowledged, no event")
            elif times.count(at) > 1:
                findings.duplicated.append(f"poke of {sender} to {recipient} at {at}: {times.count(at)} events")
        if len(times) > len(poking.acknowledged) + poking.maybe:
            findings.duplicated.append(f"pokes of {sender} to {recipient}: {len(times)} events, {len(poking.acknowledged)} "
                                       f"acknowledged and {poking.maybe} unanswered")
        adoptions.append(lambda poking=poking, times=times: (setattr(poking, "acknowledged", times), setattr(poking, "maybe", 0)))
    for person in PEOPLE:
        for event in events[person.index]:
            if event["type"] == "poke" and (event["from"]["id"] not in by_id or (by_id[event["from"]["id"]].index, person.index) not in POKES):
                findings.other.append(f"a poke to {person.index} that nobody sent")

    # Votes: found in their initiators' exports, ballots in their voters'.
    started, untracked = {}, {}
    for person in PEOPLE:
        for vote in data[person.index]["votes_started"]:
            started[vote["id"]] = (person, vote)
            if vote["id"] not in VOTES:
                # Opened by a request that got no answer: held to the same rules from now on.
                untracked[vote["id"]] = TrackedVote(vote["id"], person, vote["participants"], False)
                adoptions.append(lambda found=untracked[vote["id"]]: VOTES.setdefault(found.id, found))
    ballots = {}
    for person in PEOPLE:
        for own in data[person.index]["ballots"]:
            ballots.setdefault(own["vote_id"], {})[person.index] = own["option"]
    finished_events = {}
    for person in PEOPLE:
        for event in events[person.index]:
            if event["type"] == "vote_finished":
                finished_events.setdefault(event["vote_id"], []).append(person.index)
            elif event["type"] in ("vote_conflict", "vote_cancelled"):
                findings.other.append(f"a {event['type']} event for vote {event['vote_id']}, which nothing here causes")
    for vote_id in set(ballots) | set(finished_events):
        if vote_id not in VOTES and vote_id not in started:
            findings.other.append(f"ballots or events for vote {vote_id}, which nobody opened")
    for vote in list(VOTES.values()) + list(untracked.values()):
        if vote.id not in started:
            findings.lost.append(f"vote {vote.id} of {vote.initiator.index}: acknowledged, not there")
            continue
        facts = started[vote.id][1]
        present = ballots.get(vote.id, {})
        for voter, option in vote.ballots.items():
            if present.get(voter) != option:
                findings.lost.append(f"ballot of {voter} on {vote.id}: acknowledged option {option}, found {present.get(voter)}")
        for voter, option in present.items():
            if voter not in vote.ballots and voter not in vote.ballots_maybe and voter not in vote.ballots_found:
                findings.other.append(f"a ballot of {voter} on {vote.id} that nobody cast")
            elif voter in vote.ballots_maybe and vote.ballots_maybe[voter] != option:
                findings.other.append(f"ballot of {voter} on {vote.id}: option {option}, sent {vote.ballots_maybe[voter]}")
        if facts["ballots_cast"] != len(present):
            findings.half_done.append(f"vote {vote.id} counts {facts['ballots_cast']} ballots, {len(present)} are there")
        state = facts["state"]
        if vote.close == "acknowledged" and state == "open":
            findings.lost.append(f"close of {vote.id}: acknowledged, still open")
        if len(present) >= vote.participants and state == "open":
            findings.half_done.append(f"vote {vote.id}: every participant voted, still open")
        recipients = finished_events.get(vote.id, [])
        if state == "finished":
            expected = {vote.initiator.index} | set(present)
            for recipient in expected:
                if recipients.count(recipient) == 0:
                    findings.half_done.append(f"vote {vote.id} finished without its vote_finished event to {recipient}")
                elif recipients.count(recipient) > 1:
                    findings.duplicated.append(f"vote {vote.id}: {recipients.count(recipient)} vote_finished events to {recipient}")
            strangers = set(recipients) - expected
            if strangers:
                findings.other.append(f"vote {vote.id}: vote_finished to {sorted(strangers)}, who are not in it")
        elif state == "open":
            if recipients:
                findings.half_done.append(f"vote {vote.id} open, with vote_finished events to {sorted(set(recipients))}")
        else:
            findings.other.append(f"vote {vote.id} is {state}, which nothing here causes")
        adoptions.append(lambda vote=vote, present=present, state=state: adopt_vote(vote, present, state))

    # Streams: every event of the export read once, in order, across the kills.
    for person in PEOPLE:
        listed = [int(event["id"]) for event in events[person.index]]
        read = [event_id for event_id, _ in list(person.stream.events)]
        if len(set(read)) != len(read):
            findings.duplicated.append(f"stream of {person.index}: an event read twice")
        if read != sorted(read):
            findings.other.append(f"stream of {person.index}: events out of order")
        missing = set(listed) - set(read)
        vanished = set(read) - set(listed)
        if missing:
            findings.lost.append(f"stream of {person.index}: {len(missing)} listed events never read (first {min(missing)})")
        if vanished:
            findings.lost.append(f"stream of {person.index}: {len(vanished)} events read, no longer listed (first {min(vanished)})")
    return findings, sum(len(found) for found in events.values()), adoptions


def adopt_pair(pair, pending, are_friends):
    if pair.state == "asked?" and pending:
        pair.state, pair.request_id = "pending", pending
        pair.request_ids.append(pending)
    elif pair.state == "asked?":
        pair.state = "none"
    elif pair.state == "accepting?" and are_friends:
        pair.state, pair.accepted = "friends", pair.accepted + 1
    elif pair.state == "accepting?":
        pair.state = "pending"
    elif pair.state == "ending?":
        pair.state = "friends" if are_friends else "none"


def adopt_vote(vote, present, state):
    for voter in list(vote.ballots_maybe):
        if voter in present:
            vote.ballots_found[voter] = present[voter]
        del vote.ballots_maybe[voter]
    vote.open = state == "open"
    if vote.close == "maybe":
        vote.close = "none"


def store_checks():
    """What the store itself says; the server must be down for SpatiaLite's (CheckSpatialIndex writes)."""
    if SPATIALITE:
        statements = ["PRAGMA integrity_check;"]
        trees = [("place", "geom"), ("campus", "boundary"), ("user_position", "geom"), ("vote", "geom")]
        for table, column in trees:
            statements.append(f"SELECT 'rtreecheck {table}.{column}: ' || rtreecheck('idx_{table}_{column}');")
            statements.append(f"SELECT 'CheckSpatialIndex {table}.{column}: ' || CheckSpatialIndex('{table}', '{column}');")
        statements.append("SELECT 'friendship halves: ' || count(*) FROM friendship AS mine WHERE NOT EXISTS "
                          "(SELECT 1 FROM friendship AS theirs WHERE theirs.account_id = mine.friend_id AND theirs.friend_id = mine.account_id);")
        result = subprocess.run(["spatialite", "-silent", options.db], input="\n".join(statements), capture_output=True, text=True, timeout=300)
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        good = (result.returncode == 0 and lines[:1] == ["ok"] and len(lines) == 2 + 2 * len(trees)
                and all(line.endswith(": ok") or line.endswith(": 1") for line in lines[1:-1]) and lines[-1] == "friendship halves: 0")
        summary = f"integrity_check {lines[0] if lines else '?'}, rtreecheck and CheckSpatialIndex ok on {len(trees)} R*Trees"
        return good, summary if good else "store checks failed: " + " | ".join(lines[:12]) + result.stderr[-500:]
    parsed = urllib.parse.urlparse(options.db)
    query = ("SELECT count(*) FROM friendship AS mine WHERE NOT EXISTS (SELECT 1 FROM friendship AS theirs "
             "WHERE theirs.account_id = mine.friend_id AND theirs.friend_id = mine.account_id)")
    result = subprocess.run(["psql", "-h", parsed.hostname, "-p", str(parsed.port), "-U", parsed.username, "-d", parsed.path[1:],
                             "-qtAc", query], capture_output=True, text=True, timeout=60)
    good = result.returncode == 0 and result.stdout.strip() == "0"
    return good, "friendship rows without their reverse: " + (result.stdout.strip() or result.stderr.strip()[:200])


# --- Rounds -----------------------------------------------------------------------------------------------

def pause(idles):
    RUN.clear()
    deadline = time.monotonic() + 60
    for idle in idles:
        if not idle.wait(max(0.0, deadline - time.monotonic())):
            sys.exit("a writer did not pause within 60 s")


def settle(client):
    """Reads back until everything holds or DEADLINE_CHECK passes (announcements after a restart come within
    a second or two, and the streams must reconnect); once everything holds, takes what unanswered writes did
    as done. Returns the findings and the number of events listed."""
    deadline = time.monotonic() + DEADLINE_CHECK
    while True:
        outcome = check(client)
        if outcome is not None and not outcome[0].all():
            with LOCK:
                for adoption in outcome[2]:
                    adoption()
            return outcome[0], outcome[1]
        if time.monotonic() > deadline:
            if outcome is None:
                sys.exit(f"the server did not answer the read-back within {DEADLINE_CHECK} s")
            return outcome[0], outcome[1]
        time.sleep(0.5)


SERVER = None


def main():
    global SERVER
    server = SERVER = Server()
    server.start()
    client = Client(HOST, options.port, timeout=60)
    for index, line in enumerate(open(options.sessions).read().split("\n")):
        if line:
            PEOPLE.append(Person(index, line.split()[0]))
    for person in PEOPLE:
        answer = client.json("GET", "/v1/me", person.token)
        if answer is None or answer[0] != 200:
            sys.exit(f"GET /v1/me for a seeded person answered {answer}")
        person.id = answer[1]["id"]
    count_people = len(PEOPLE)
    for person in PEOPLE:
        for step in (1, 2, 5):
            PAIRS.append(Pair(person, PEOPLE[(person.index + step) % count_people]))
    for person in PEOPLE:
        person.stream = Stream(person)
        person.stream.start()
    idles = [threading.Event() for _ in range(options.writers)]
    threads = [threading.Thread(target=writer, args=(number, idles[number]), daemon=True) for number in range(options.writers)]
    for thread in threads:
        thread.start()
    log(f"{count_people} people, {len(PAIRS)} pairs to befriend, {options.writers} writers, seed {SEED}; "
        f"{options.server_kills} server kills" + (f", {options.postgres_kills} PostgreSQL kills" if options.postgres_kills else ""))

    kinds = ["server"] * options.server_kills + ["postgres"] * options.postgres_kills
    RANDOM.shuffle(kinds)
    failed = False
    for number, kind in enumerate(kinds, start=1):
        with LOCK:
            ROUND["acknowledged"], ROUND["maybe"] = {}, {}
        RUN.set()
        load_for = RANDOM.uniform(*options.seconds)
        time.sleep(load_for)
        store_line = ""
        if kind == "server":
            server.kill()
            killed_at = time.monotonic()
            if SPATIALITE:
                good, store_line = store_checks()
                failed |= not good
            time.sleep(RANDOM.uniform(0.2, 1.0))
            back_in = server.start() + (time.monotonic() - killed_at)
            how = f"server SIGKILL after {load_for:.1f} s, serving again {back_in:.1f} s later"
        else:
            subprocess.run([options.postgres, "crash"], check=True, timeout=120)
            killed_at = time.monotonic()
            time.sleep(RANDOM.uniform(1.0, 3.0))
            subprocess.run([options.postgres, "start"], check=True, timeout=180, stdout=subprocess.DEVNULL)
            server.wait_healthy()
            if server.process.poll() is not None:
                sys.exit("the server exited while PostgreSQL was down")
            how = f"PostgreSQL killed (immediate) after {load_for:.1f} s, healthy again {time.monotonic() - killed_at:.1f} s later"
        # A little more load on the restarted server, then read everything back.
        time.sleep(RANDOM.uniform(0.5, 1.5))
        pause(idles)
        findings, events_read = settle(client)
        if not SPATIALITE:
            good, store_line = store_checks()
            failed |= not good
        with LOCK:
            acknowledged, maybe = dict(ROUND["acknowledged"]), dict(ROUND["maybe"])
        for bucket, counts in (("acknowledged", acknowledged), ("maybe", maybe)):
            for key, value in counts.items():
                TOTAL[bucket][key] = TOTAL[bucket].get(key, 0) + value
        TOTAL["lost"] |= set(findings.lost)
        TOTAL["duplicated"] |= set(findings.duplicated)
        TOTAL["half_done"] |= set(findings.half_done)
        log(f"round {number}: {how}")
        log("  acknowledged: " + ", ".join(f"{kind_} {acknowledged.get(kind_, 0)}" for kind_ in KINDS)
            + f"; unanswered: {sum(maybe.values())}; events listed {events_read}")
        log(f"  lost {len(findings.lost)}, duplicated {len(findings.duplicated)}, half-done {len(findings.half_done)}, "
            f"other {len(findings.other)}" + (f"; {store_line}" if store_line else ""))
        for finding in findings.all()[:20]:
            log("  FINDING: " + finding)
        if findings.all():
            failed = True
    STOP.set()
    RUN.set()
    for person in PEOPLE:
        person.stream.stop()
    for thread in threads:
        thread.join(60)
    SERVER.kill()
    if SPATIALITE:
        good, store_line = store_checks()
        failed |= not good
        log(f"after the last round: {store_line}")
    totals = TOTAL["acknowledged"]
    log(f"totals over {len(kinds)} rounds: acknowledged " + ", ".join(f"{kind} {totals.get(kind, 0)}" for kind in KINDS)
        + f" ({sum(totals.values())} writes); unanswered {sum(TOTAL['maybe'].values())}; streams read "
        f"{sum(len(person.stream.events) for person in PEOPLE)} events over {sum(person.stream.opened for person in PEOPLE)} connections")
    log(f"lost {len(TOTAL['lost'])}, duplicated {len(TOTAL['duplicated'])}, half-done {len(TOTAL['half_done'])}")
    if FAILURES:
        failed = True
        log(f"{len(FAILURES)} answers broke the contract, first:")
        for failure in FAILURES[:20]:
            log("  " + failure)
    if failed:
        log("crash check FAILED (seed %d)" % SEED)
        sys.exit(1)
    log("crash check: every acknowledged write and event found once, nothing half done")


signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
try:
    main()
finally:
    STOP.set()
    if SERVER is not None:
        SERVER.kill()
