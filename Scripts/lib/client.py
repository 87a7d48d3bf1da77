"""An HTTP client as the checks and benchmarks drive the API with it (Scripts/check/faults.py, crash.py,
Scripts/bench/soak.py): one keep-alive connection, reopened after any failure."""
import http.client
import json
import time


class Client:
    """One keep-alive connection to HOST:PORT. `send` answers (status, headers, body text), or None when the
    request got no answer; then `refused` says whether it was never sent (the connection could not be opened:
    nothing was done) or was cut under way (it may or may not have been done). `seconds` is how long the last
    request took."""

    def __init__(self, host, port, timeout=30):
        self.host, self.port, self.timeout, self.connection = host, port, timeout, None
        self.refused = False
        self.seconds = 0.0

    def send(self, method, path, token=None, body=None, headers=None):
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        started = time.monotonic()
        self.refused = False
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
                try:
                    self.connection.connect()
                except OSError:
                    self.refused = True
                    raise
            self.connection.request(method, path, body=data, headers=headers)
            response = self.connection.getresponse()
            text = response.read().decode()
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            self.seconds = time.monotonic() - started
            return response.status, dict(response.getheaders()), text
        except (OSError, http.client.HTTPException):
            self.close()
            self.seconds = time.monotonic() - started
            return None

    def json(self, method, path, token=None, body=None):
        """The answer's status and its body read as JSON (None when it is not), or None with no answer."""
        answer = self.send(method, path, token, body)
        if answer is None:
            return None
        try:
            return answer[0], json.loads(answer[2]) if answer[2] else None
        except ValueError:
            return answer[0], None

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None
