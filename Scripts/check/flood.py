#!/usr/bin/env python3
"""Slow-request flood against a Vicinity server on loopback, with a second client measuring what it gets meanwhile.

Attackers open connections and send each request slowly: the head, then one body byte every TRICKLE seconds
(the body never completes). A connection that is cut is opened again at once, so the pressure lasts the whole
run. Each attacker address is its own client (127.0.0.0/8 is all this machine).

Meanwhile a prober on another address asks /health on a new connection four times a second and signs someone
up every two seconds, and (phase "many") a connection opened before the flood asks /health on the same
connection. It prints what each side saw. Every loop is bounded by --seconds; only 127.0.0.0/8 is used.
"""
import argparse
import asyncio
import json
import os
import resource
import statistics
import time

REQUEST_HEAD = (
    b"POST /v1/users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
)


class Tally:
    def __init__(self):
        self.opened = 0
        self.refused = 0          # answered 503 at once
        self.refusal_seconds = []  # connect to 503
        self.timed_out = 0        # answered 408
        self.cut_after = []       # first byte to 408
        self.other_closes = 0
        self.connect_errors = 0
        self.peak_held = 0
        self.held = 0


async def attacker(host, port, local, trickle, deadline, tally):
    """One slow request after another from `local` until `deadline`."""
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=(local, 0)), timeout=10)
        except (OSError, asyncio.TimeoutError):
            tally.connect_errors += 1
            await asyncio.sleep(0.5)
            continue
        tally.opened += 1
        tally.held += 1
        tally.peak_held = max(tally.peak_held, tally.held)
        first_byte = None
        answer = b""
        try:
            first_byte = time.monotonic()
            writer.write(REQUEST_HEAD)
            await writer.drain()
            while time.monotonic() < deadline:
                try:
                    chunk = await asyncio.wait_for(reader.read(4096), timeout=trickle)
                    if not chunk:
                        break
                    answer += chunk
                except asyncio.TimeoutError:
                    writer.write(b" ")
                    await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            tally.held -= 1
            writer.close()
        if answer.startswith(b"HTTP/1.1 503"):
            tally.refused += 1
            tally.refusal_seconds.append(time.monotonic() - started)
            await asyncio.sleep(0.2)  # a refused client comes back, though not in a tight loop
        elif answer.startswith(b"HTTP/1.1 408"):
            tally.timed_out += 1
            tally.cut_after.append(time.monotonic() - first_byte)
        elif time.monotonic() < deadline:
            tally.other_closes += 1


async def request(host, port, local, payload, timeout=10):
    """Sends one request on a new connection and returns (status, seconds); status 0 when unanswered."""
    started = time.monotonic()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, local_addr=(local, 0)), timeout=timeout)
        writer.write(payload)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout=timeout)
        writer.close()
        status = int(line.split()[1]) if line.startswith(b"HTTP/1.1") else 0
    except (OSError, asyncio.TimeoutError, ValueError, IndexError):
        status = 0
    return status, time.monotonic() - started


def health():
    return b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


def sign_up(number):
    body = json.dumps({"username": f"flood{os.getpid()}x{number}", "password": "correct horse battery",
                       "first_name": "Flood", "last_name": "Probe"}).encode()
    return (b"POST /v1/users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


async def prober(host, port, local, deadline, results):
    number = 0
    next_sign_up = time.monotonic()
    while time.monotonic() < deadline:
        results["health"].append(await request(host, port, local, health()))
        if time.monotonic() >= next_sign_up:
            number += 1
            results["sign_up"].append(await request(host, port, local, sign_up(number)))
            next_sign_up += 2
        await asyncio.sleep(0.25)


async def kept_prober(host, port, local, deadline, results, opened):
    """/health over one keep-alive connection opened before the flood."""
    reader, writer = await asyncio.open_connection(host, port, local_addr=(local, 0))
    opened.set()
    ask = b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            writer.write(ask)
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), timeout=10)
            status = int(line.split()[1]) if line.startswith(b"HTTP/1.1") else 0
            length = 0
            while True:
                header = await asyncio.wait_for(reader.readline(), timeout=10)
                if header in (b"\r\n", b""):
                    break
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            await asyncio.wait_for(reader.readexactly(length), timeout=10)
        except (OSError, asyncio.TimeoutError, ValueError, asyncio.IncompleteReadError):
            status = 0
        results["kept"].append((status, time.monotonic() - started))
        if status == 0:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(local, 0))
        # Twice the pace of the idle timeout would be plenty; four a second shows latency.
        await asyncio.sleep(0.25)
    writer.close()


def summary(name, samples):
    if not samples:
        return f"{name}: none"
    statuses = {}
    for status, _ in samples:
        statuses[status] = statuses.get(status, 0) + 1
    answered = sorted(seconds for status, seconds in samples if status)
    text = ", ".join(f"{count}×{status or 'unanswered'}" for status, count in sorted(statuses.items()))
    if answered:
        p99 = answered[min(len(answered) - 1, int(len(answered) * 0.99))]
        text += (f"; latency p50 {statistics.median(answered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
                 f"max {answered[-1] * 1000:.1f} ms")
    return f"{name}: {len(samples)} requests, {text}"


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--phase", choices=["one", "many"], required=True,
                        help="one: every attacker on 127.0.0.1; many: attackers spread over 127.0.0.10 and up")
    parser.add_argument("--connections", type=int, default=2500)
    parser.add_argument("--addresses", type=int, default=20, help="attacker addresses in phase many")
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--trickle", type=float, default=2.0, help="seconds between body bytes")
    parser.add_argument("--role", choices=["attack", "probe"], required=True,
                        help="attack: the slow requests; probe: the other client, in a process of its own so that "
                             "the attackers' event loop does not delay what it measures")
    arguments = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    host = "127.0.0.1"
    deadline = time.monotonic() + arguments.seconds
    if arguments.role == "probe":
        results = {"health": [], "sign_up": [], "kept": []}
        tasks = [asyncio.create_task(prober(host, arguments.port, "127.0.0.2", deadline, results))]
        if arguments.phase == "many":
            opened = asyncio.Event()
            tasks.append(asyncio.create_task(kept_prober(host, arguments.port, "127.0.0.3", deadline, results, opened)))
        await asyncio.gather(*tasks)
        print("probe from another address, new connection each time:")
        print("  " + summary("GET /health", results["health"]))
        print("  " + summary("POST /v1/users", results["sign_up"]))
        if results["kept"]:
            print("probe on a connection opened before the flood:")
            print("  " + summary("GET /health", results["kept"]))
        return

    tally = Tally()
    tasks = []
    for index in range(arguments.connections):
        local = "127.0.0.1" if arguments.phase == "one" else f"127.0.0.{10 + index % arguments.addresses}"
        tasks.append(asyncio.create_task(attacker(host, arguments.port, local, arguments.trickle, deadline, tally)))
        if index % 100 == 99:
            await asyncio.sleep(0.05)  # open them over a moment, as a real client does
    await asyncio.gather(*tasks)

    print(f"attack: {arguments.connections} slow requests kept going for {arguments.seconds:.0f} s "
          f"from {'one address' if arguments.phase == 'one' else f'{arguments.addresses} addresses'}")
    print(f"  connections opened {tally.opened}, held at once at most {tally.peak_held} (admitted or waiting for "
          f"their answer), refused 503 {tally.refused}, cut 408 {tally.timed_out}, other closes {tally.other_closes}, "
          f"connect errors {tally.connect_errors}")
    if tally.refusal_seconds:
        refusals = sorted(tally.refusal_seconds)
        print(f"  503 within (as the attacking process saw it, its own delays included): median "
              f"{statistics.median(refusals) * 1000:.1f} ms, p99 {refusals[int(len(refusals) * 0.99) - 1] * 1000:.1f} ms")
    if tally.cut_after:
        print(f"  408 after the first byte: min {min(tally.cut_after):.2f} s, median {statistics.median(tally.cut_after):.2f} s, "
              f"max {max(tally.cut_after):.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
