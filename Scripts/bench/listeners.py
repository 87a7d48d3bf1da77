"""Holds the event streams of the first COUNT people of a SESSIONS file ("TOKEN LAT LON" lines from
vicinity-seed) open for SECONDS and counts what arrives, for Scripts/bench/friends.sh:
    listeners.py HOST PORT SESSIONS COUNT SECONDS
Prints one line: streams opened, friend_moved notices and recorded events received."""
import os
import sys
import threading
import time

# The stream reader is shared with the cluster and fault checks, in Scripts/lib.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from sse import open_stream


def listen(host, port, token, until, counts, lock):
    connection, response = open_stream(host, port, token, timeout=until - time.time() + 30)
    if response.status != 200:
        with lock:
            counts["refused"] += 1
        return
    with lock:
        counts["open"] += 1
    kind = None
    connection.sock.settimeout(max(1, until - time.time()))
    try:
        while time.time() < until:
            line = response.readline()
            if not line:
                break
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line == "" and kind:
                with lock:
                    counts[kind] = counts.get(kind, 0) + 1
                kind = None
    except OSError:
        pass  # the wait ran out: the measurement is over
    connection.close()


def main():
    host, port, sessions, count, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    with open(sessions) as lines:
        tokens = [line.split()[0] for line, _ in zip(lines, range(count))]
    counts, lock = {"open": 0, "refused": 0}, threading.Lock()
    until = time.time() + seconds
    threads = [threading.Thread(target=listen, args=(host, port, token, until, counts, lock), daemon=True) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    moved = counts.get("friend_moved", 0)
    recorded = sum(value for key, value in counts.items() if key not in ("open", "refused", "friend_moved"))
    print(f"{counts['open']} streams open ({counts['refused']} refused); {moved} friend_moved notices, "
          f"{recorded} recorded events received")


if __name__ == "__main__":
    main()
