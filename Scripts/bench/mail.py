"""The measuring half of Scripts/bench/mail.sh: sign-ups that mail codes, the relay's record of when each
arrived, and a relay stopped and started again.

    mail.py SERVER MAIL_DIR SIGN_UPS DOWN_SIGN_UPS DOWN_SECONDS RELAY_PID RELAY_PORT WORK
"""

import concurrent.futures
import glob
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

server, mail_dir = sys.argv[1], sys.argv[2]
sign_ups, down_sign_ups, down_seconds = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
relay_pid, relay_port, work = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8]
run = str(os.getpid())


def sign_up(index, phase):
    """Signs person `index` up from a client address of their own; returns (address, answered at, seconds taken)."""
    address = f"p{phase}-{index}-{run}@student.csulb.edu"
    body = json.dumps({"username": f"mail{phase}x{index}x{run}", "password": "a bench passphrase", "first_name": "Mail",
                       "last_name": "Bench", "email": address}).encode()
    request = urllib.request.Request(server + "/v1/users", data=body, method="POST", headers={
        "Content-Type": "application/json",
        # 10.<phase>.<index / 250>.<index % 250 + 1>: a client per person, so no per-client limit is met.
        "X-Forwarded-For": f"10.{phase}.{index // 250}.{index % 250 + 1}"})
    started = time.time()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    answered = time.time()
    if status != 201:
        sys.exit(f"sign-up {index} answered {status}")
    return address, answered, answered - started


def sign_up_all(count, phase):
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda index: sign_up(index, phase), range(count)))


def received(folder):
    mails = []
    for path in glob.glob(os.path.join(folder, "*.json")):
        with open(path) as handle:
            mails.append(json.load(handle))
    return mails


def wait_for(folder, addresses, limit):
    """The mails to `addresses` once each has one, or when `limit` seconds have passed."""
    deadline = time.time() + limit
    while True:
        mails = [mail for mail in received(folder) if mail["rcpt_tos"][0] in addresses]
        if len({mail["rcpt_tos"][0] for mail in mails}) >= len(addresses) or time.time() > deadline:
            return mails
        time.sleep(0.05)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def milliseconds(seconds):
    return f"{seconds * 1000:.0f} ms"


def once_each(mails, addresses):
    counts = {}
    for mail in mails:
        counts[mail["rcpt_tos"][0]] = counts.get(mail["rcpt_tos"][0], 0) + 1
    missing = [address for address in addresses if address not in counts]
    twice = [address for address, count in counts.items() if count > 1]
    return missing, twice


# 1. The relay up.
people = sign_up_all(sign_ups, 1)
addresses = {address: answered for address, answered, _ in people}
mails = wait_for(mail_dir, set(addresses), 120)
missing, twice = once_each(mails, addresses)
delays = [mail["received_at"] - addresses[mail["rcpt_tos"][0]] for mail in mails]
answers = [taken for _, _, taken in people]
print(f"\n{sign_ups} sign-ups with an address, 8 at a time, relay up:")
print(f"  sign-up answer      p50 {milliseconds(percentile(answers, 0.5))}, p99 {milliseconds(percentile(answers, 0.99))}"
      f" (a password hash and a code hash each)")
print(f"  answer to relay     p50 {milliseconds(percentile(delays, 0.5))}, p99 {milliseconds(percentile(delays, 0.99))},"
      f" max {milliseconds(max(delays))}")
print(f"  mails: {len(mails)} for {len(addresses)} addresses; none missing: {not missing}; none twice: {not twice}")
if missing or twice:
    sys.exit(f"missing {missing[:5]}, twice {twice[:5]}")

# 2. The relay down for a while, then back on the same port with a fresh folder.
os.kill(relay_pid, signal.SIGTERM)
time.sleep(0.5)
stopped = time.time()
people = sign_up_all(down_sign_ups, 2)
addresses = {address for address, _, _ in people}
time.sleep(max(0.0, down_seconds - (time.time() - stopped)))
back_dir = os.path.join(work, "mail-after")
os.makedirs(back_dir, exist_ok=True)
ready = os.path.join(work, "mail-after.port")
relay = subprocess.Popen([sys.executable, "Tests/MailTestSupport/smtp_server.py", "--ready", ready, "--mail-dir", back_dir,
                          "--port", str(relay_port)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
try:
    while not os.path.exists(ready):
        time.sleep(0.02)
    back = time.time()
    mails = wait_for(back_dir, addresses, 300)
    # Anything sent twice would come soon after: a few retry rounds more.
    time.sleep(15)
    mails = [mail for mail in received(back_dir) if mail["rcpt_tos"][0] in addresses]
    missing, twice = once_each(mails, addresses)
    arrivals = sorted(mail["received_at"] - back for mail in mails)
    print(f"\nrelay stopped; {down_sign_ups} sign-ups (all answered 201 while it was down); relay back after {down_seconds:.0f} s:")
    if arrivals:
        print(f"  after its return: first code {arrivals[0]:.1f} s, last {arrivals[-1]:.1f} s")
    print(f"  mails: {len(mails)} for {len(addresses)} addresses; none missing: {not missing}; none twice: {not twice}")
    if missing or twice:
        sys.exit(f"missing {missing[:5]}, twice {twice[:5]}")
finally:
    relay.terminate()
    relay.wait()
