"""The event stream of /v1/events as the checks and benchmarks read it (Scripts/check/cluster.py, faults.py and
crash.py, Scripts/bench/listeners.py and soak.py)."""
import http.client


def open_stream(host, port, token, last_event_id=None, timeout=120, tls=None):
    """Asks for the stream with the person's token, resuming after LAST_EVENT_ID when given, over TLS with the
    ssl.SSLContext TLS when given; returns the connection and its response (whatever its status)."""
    if tls:
        connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=tls)
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
    headers = {"Authorization": "Bearer " + token, "Accept": "text/event-stream"}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    connection.request("GET", "/v1/events", headers=headers)
    return connection, connection.getresponse()


def events(response):
    """The id and type of each event of the stream as it arrives, until the stream ends."""
    for event_id, kind, _ in records(response):
        yield event_id, kind


def records(response):
    """The id, type and data (the text of its `data:` line) of each recorded event of the stream as it
    arrives, until the stream ends; notices without an id are left out."""
    for event_id, kind, data in deliveries(response):
        if event_id:
            yield event_id, kind, data


def deliveries(response):
    """The id (None for a notice, such as friend_moved), type and data of everything the stream delivers, as
    it arrives, until the stream ends."""
    event_id = kind = data = None
    while True:
        line = response.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "":
            if event_id or kind:
                yield event_id, kind, data
            event_id = kind = data = None
