"""A push service and the browser behind it, on loopback, for the Web Push tests.

It makes a subscription of its own (a P-256 key pair and an auth secret, which never leave this process but
for the public parts), writes them with its port to FOLDER/ready.json, and answers each POST to /push/...:

  --answer accept   checks the request as a push service would (the VAPID JWT's ES256 signature against the
                    k= key, its header and claims) and as the browser would (decrypts the aes128gcm body with
                    http_ece, an implementation independent of the one under test); 201 when all holds, else 400
                    with the problems
  --answer STATUS   answers STATUS, with --header lines added, without checking
  --answer record   answers 201 at once and keeps the body (base64) to be checked afterwards: for a benchmark,
                    where checking each push as it comes would make the service the slowest part

Every request is written to FOLDER/N.json (N counting from 1): its headers, when its body had arrived (UNIX
seconds), the problems found, the plaintext (base64) and the claims.

Started again on the same FOLDER (with --port, the port it had), it is the same browser: it reads its keys from
FOLDER/keys.json and numbers requests on from the last file, as a push service that was down and came back.
"""
import argparse
import base64
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def write_json(path, value):
    """Written whole, then renamed, so that a reader never sees half a file."""
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump(value, handle)
    os.rename(partial, path)


class Service:
    def __init__(self, folder, answer, headers, subject):
        self.folder = folder
        self.answer = answer
        self.headers = headers
        self.subject = subject
        keys = os.path.join(folder, "keys.json")
        if os.path.exists(keys):
            with open(keys) as handle:
                kept = json.load(handle)
            self.private_key = serialization.load_pem_private_key(kept["private_key"].encode("ascii"), password=None)
            self.auth = b64url_decode(kept["auth"])
        else:
            self.private_key = ec.generate_private_key(ec.SECP256R1())
            self.auth = os.urandom(16)
            pem = self.private_key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
            write_json(keys, {"private_key": pem.decode("ascii"), "auth": b64url(self.auth)})
        self.public_key = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.count = max([int(name[:-5]) for name in os.listdir(folder) if re.fullmatch(r"[0-9]+\.json", name)] or [0])
        self.lock = threading.Lock()
        self.origin = None

    def check(self, headers, body):
        """What a push service and a browser would object to; the plaintext and claims when readable."""
        problems, claims, plaintext, k = [], None, None, None
        if headers.get("content-encoding") != "aes128gcm":
            problems.append("Content-Encoding is %r, not aes128gcm" % headers.get("content-encoding"))
        if not re.fullmatch(r"[0-9]+", headers.get("ttl", "")):
            problems.append("TTL is missing or not delta-seconds")
        if len(body) > 4096:
            problems.append("the body is %d octets, more than 4096" % len(body))
        match = re.fullmatch(r"vapid t=([A-Za-z0-9_\-.]+), k=([A-Za-z0-9_\-]+)", headers.get("authorization", ""))
        if not match:
            problems.append("Authorization is not vapid t=..., k=...: %r" % headers.get("authorization"))
        else:
            token, k = match.groups()
            try:
                claims = self.check_token(token, k, problems)
            except (ValueError, TypeError, AttributeError) as error:
                problems.append("the JWT cannot be read: %s" % error)
        try:
            plaintext = http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth, version="aes128gcm")
        except Exception as error:
            problems.append("the body does not decrypt: %s" % error)
        return problems, claims, plaintext, k

    def check_token(self, token, k, problems):
        parts = token.split(".")
        if len(parts) != 3:
            problems.append("the JWT has %d parts" % len(parts))
            return None
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        if header != {"typ": "JWT", "alg": "ES256"}:
            problems.append("the JWT header is %r" % header)
        signature = b64url_decode(parts[2])
        if len(signature) != 64:
            problems.append("the signature is %d octets, not r||s of 64" % len(signature))
        else:
            try:
                key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(k))
                der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
                key.verify(der, (parts[0] + "." + parts[1]).encode("ascii"), ec.ECDSA(hashes.SHA256()))
            except InvalidSignature:
                problems.append("the JWT signature does not verify with the k= key")
            except ValueError as error:
                problems.append("k= is not a P-256 public key: %s" % error)
        if claims.get("aud") != self.origin:
            problems.append("aud is %r, not %r" % (claims.get("aud"), self.origin))
        now = time.time()
        expiry = claims.get("exp")
        if not isinstance(expiry, int) or not now < expiry <= now + 24 * 3600:
            problems.append("exp %r is not within the next 24 hours" % expiry)
        if claims.get("sub") != self.subject:
            problems.append("sub is %r, not %r" % (claims.get("sub"), self.subject))
        return claims

    def record(self, value):
        with self.lock:
            self.count += 1
            write_json(os.path.join(self.folder, "%d.json" % self.count), value)


def handler_for(service):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            arrived = time.time()
            headers = {name.lower(): value for name, value in self.headers.items()}
            record = {"path": self.path, "headers": headers, "length": len(body), "received_at": arrived}
            if service.answer == "record":
                record.update(problems=[], claims=None, k=None, plaintext=None, body=base64.b64encode(body).decode("ascii"))
                service.record(record)
                self.reply(201, b"", [])
            elif service.answer == "accept":
                problems, claims, plaintext, k = service.check(headers, body)
                record.update(problems=problems, claims=claims, k=k,
                              plaintext=base64.b64encode(plaintext).decode("ascii") if plaintext is not None else None)
                service.record(record)
                if problems:
                    self.reply(400, json.dumps(problems).encode("utf-8"), [("Content-Type", "application/json")])
                else:
                    self.reply(201, b"", [("Location", "/message/%d" % service.count)])
            else:
                record.update(problems=[], claims=None, k=None, plaintext=None)
                service.record(record)
                self.reply(int(service.answer), b"answered as told", service.headers)

        def reply(self, status, body, headers):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):
            sys.stderr.write("%s\n" % (format % args))

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--folder", required=True)
    parser.add_argument("--answer", default="accept")
    parser.add_argument("--header", action="append", default=[], help="NAME: VALUE, added to every answer")
    parser.add_argument("--subject", default="")
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    headers = [tuple(part.strip() for part in line.split(":", 1)) for line in arguments.header]
    service = Service(arguments.folder, arguments.answer, headers, arguments.subject)
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), handler_for(service))
    port = server.server_address[1]
    service.origin = "http://127.0.0.1:%d" % port
    write_json(os.path.join(arguments.folder, "ready.json"),
               {"port": port, "p256dh": b64url(service.public_key), "auth": b64url(service.auth)})
    server.serve_forever()


if __name__ == "__main__":
    main()
