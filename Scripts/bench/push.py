"""The measuring half of Scripts/bench/push.sh: devices registered, events made at a steady rate, and the
push service's record of when each push arrived, its bodies decrypted afterwards.

    push.py SERVER SESSIONS PUSH_DIR RATE SECONDS DATABASE DEVICES
"""

import concurrent.futures
import glob
import http.client
import json
import os
import random
import sqlite3
import sys
import threading
import time
import urllib.parse
import base64

import http_ece
from cryptography.hazmat.primitives import serialization

server, sessions, push_dir = sys.argv[1], sys.argv[2], sys.argv[3]
rate, seconds, database, devices = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], int(sys.argv[7])
address = urllib.parse.urlparse(server)
with open(os.path.join(push_dir, "ready.json")) as handle:
    service = json.load(handle)
with open(sessions) as handle:
    tokens = [line.split()[0] for line in handle if line.strip()]

local = threading.local()


def call(method, path, token, body=None):
    """One request on this thread's kept-alive connection; (status, parsed answer)."""
    if getattr(local, "connection", None) is None:
        local.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    headers = {"Authorization": "Bearer " + token}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        local.connection.request(method, path, body=data, headers=headers)
        response = local.connection.getresponse()
        text = response.read()
    except (http.client.HTTPException, OSError):
        local.connection.close()
        local.connection = None
        raise
    return response.status, (json.loads(text) if text else None)


class Failure(Exception):
    pass


def register(index):
    """Person `index`'s id, once their browsers are registered at /push/INDEX-N of the push service."""
    status, me = call("GET", "/v1/me", tokens[index])
    if status != 200:
        raise Failure(f"GET /v1/me answered {status}")
    for device in range(devices):
        endpoint = f"http://127.0.0.1:{service['port']}/push/{index}-{device}"
        status, answer = call("POST", "/v1/me/push-subscriptions", tokens[index],
                              {"kind": "webpush", "endpoint": endpoint, "keys": {"p256dh": service["p256dh"], "auth": service["auth"]}})
        if status != 201:
            raise Failure(f"registering a device answered {status}: {answer}")
    return me["id"]


started = time.time()
with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
    ids = list(pool.map(register, range(len(tokens))))
print(f"{len(ids)} people registered {devices} browsers each in {time.time() - started:.1f} s")
time.sleep(float(os.environ.get("PUSH_BENCH_PAUSE", "0")))

# The events: friend requests between random pairs, paced per thread so that the pushes they make (one per
# device of the recipient) come to `rate` a second.
threads = 4
made = []
failures = []
lock = threading.Lock()


def send_requests(number):
    try:
        send_paced(number)
    except Exception as error:  # said once the run ends, rather than lost with the thread
        with lock:
            failures.append(repr(error))


def send_paced(number):
    generator = random.Random(2026 + number)
    interval = threads * devices / rate
    due = time.time()
    end = due + seconds
    mine = []
    while due < end:
        pause = due - time.time()
        if pause > 0:
            time.sleep(pause)
        sender, recipient = generator.sample(range(len(tokens)), 2)
        status, _ = call("POST", "/v1/friend-requests", tokens[sender], {"to": ids[recipient]})
        if status in (200, 201):  # 200: the recipient had asked first, and the friendship is made
            mine.append(recipient)
        elif status != 409:  # a pair asked twice, or already friends: no event
            raise Failure(f"a friend request answered {status}")
        due += interval
    with lock:
        made.extend(mine)


before = len(glob.glob(os.path.join(push_dir, "*.json"))) - 1  # ready.json
began = time.time()
workers = [threading.Thread(target=send_requests, args=(number,)) for number in range(threads)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
answered = time.time() - began
if failures:
    sys.exit(f"the requests stopped: {failures}")
expected = len(made) * devices
print(f"{len(made)} friend requests made at {len(made) / answered:.0f} a second, {expected} pushes "
      f"({expected / answered:.0f} a second; asked: {rate:.0f} a second for {seconds:.0f} s)")


def pushes():
    records = []
    for path in glob.glob(os.path.join(push_dir, "*.json")):
        name = os.path.basename(path)
        if name[:-5].isdigit():
            with open(path) as handle:
                records.append(json.load(handle))
    return records


deadline = time.time() + 120
while len(pushes()) < expected and time.time() < deadline:
    time.sleep(0.2)
time.sleep(1)
records = pushes()

# Decrypted now, as the browser would have: each push says its event; each (event, device) should come once.
with open(os.path.join(push_dir, "keys.json")) as handle:
    kept = json.load(handle)
private_key = serialization.load_pem_private_key(kept["private_key"].encode("ascii"), password=None)
auth = base64.urlsafe_b64decode(kept["auth"] + "=" * (-len(kept["auth"]) % 4))
arrivals = {}
for record in records:
    plaintext = http_ece.decrypt(base64.b64decode(record["body"]), private_key=private_key, auth_secret=auth, version="aes128gcm")
    event = json.loads(plaintext)["event"]
    arrivals.setdefault((event, record["path"]), []).append(record["received_at"])
twice = sum(1 for times in arrivals.values() if len(times) > 1)
events = {event for event, _ in arrivals}

with sqlite3.connect(database) as db:
    made_at = dict(db.execute(f"SELECT id, created_at FROM event WHERE id IN ({','.join(str(number) for number in events)})"))
latencies = sorted(min(times) * 1000 - made_at[event] for (event, _), times in arrivals.items())


def percentile(fraction):
    return latencies[min(len(latencies) - 1, int(round(fraction * (len(latencies) - 1))))]


first = sorted(min(times) for times in arrivals.values())
span = first[-1] - first[0] if len(first) > 1 else 0
print(f"{len(arrivals)} of {expected} pushes arrived ({len(events)} events), {twice} twice; "
      f"at {len(first) / span if span else 0:.0f} a second")
print(f"event to push: p50 {percentile(0.5):.0f} ms, p90 {percentile(0.9):.0f} ms, p99 {percentile(0.99):.0f} ms, "
      f"max {latencies[-1]:.0f} ms")
# By second of the run: a slow start, a stall or a queue that grows shows here.
by_second = {}
for (event, _), times in arrivals.items():
    by_second.setdefault(int(min(times) - first[0]), []).append(min(times) * 1000 - made_at[event])
print("by second of arrival (p50/max ms): " + ", ".join(
    f"{second}: {sorted(values)[len(values) // 2]:.0f}/{max(values):.0f}" for second, values in sorted(by_second.items())))
