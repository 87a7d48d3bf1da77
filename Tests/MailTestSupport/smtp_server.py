#!/usr/bin/env python3
"""A mail relay on loopback for the SMTP client's tests, built on aiosmtpd.

    smtp_server.py --mail-dir DIR [--port N] [--ready FILE] [--cert PEM --key PEM [--implicit-tls]]
                   [--user NAME --password SECRET] [--mechanisms PLAIN,LOGIN] [--mode MODE]

Listens on 127.0.0.1 on --port, or a port the system picks, and prints "listening PORT" on its standard output
once it accepts connections (and writes the port to --ready, for scripts, when given); in silent mode, it prints
"connection" for each connection it accepts. Nothing else is printed there: the tests wait for these lines, and
aiosmtpd's own log goes to standard error.
Each message it takes is written to --mail-dir as N.eml (the data as received, after the relay undid the
dot-stuffing) and then N.json: when it arrived, the envelope, whether TLS and AUTH were used, and the message as Python's own
email package reads it (subject and body decoded), so the tests check the client against an independent reader.

--cert/--key offer STARTTLS, or with --implicit-tls speak TLS from the first octet (smtps); --user/--password
offer AUTH (only over TLS when a certificate is given) with the mechanisms listed. --mode makes the relay misbehave:
    accept         take every message (the default)
    tempfail-rcpt  451 to RCPT TO          reject-rcpt  550 to RCPT TO
    tempfail-data  451 after the data      reject-data  554 after the data
    echo-auth      535 to AUTH, repeating the password it was sent back in the reply
    silent         accept connections and never say anything
"""

import argparse
import asyncio
import email
import email.policy
import json
import os
import ssl
import time

from aiosmtpd.smtp import SMTP, AuthResult

# Replies of RFC 5321 §4.2.3 and RFC 3463 enhanced codes, as a real relay words them.
REPLIES = {
    "tempfail-rcpt": ("RCPT", "451 4.3.0 Mailbox temporarily unavailable, try again later"),
    "reject-rcpt": ("RCPT", "550 5.1.1 Recipient address rejected: unknown user"),
    "tempfail-data": ("DATA", "451 4.3.0 Queue full, try again later"),
    "reject-data": ("DATA", "554 5.6.0 Message content rejected"),
}


def write_atomically(path, data):
    partial = path + ".partial"
    with open(partial, "wb") as handle:
        handle.write(data)
    os.replace(partial, path)


class Recorder:
    """aiosmtpd's handler: answers by --mode and writes each message it takes."""

    def __init__(self, mail_dir, mode):
        self.mail_dir = mail_dir
        self.mode = mode
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        command, reply = REPLIES.get(self.mode, (None, None))
        if command == "RCPT":
            return reply
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        command, reply = REPLIES.get(self.mode, (None, None))
        if command == "DATA":
            return reply
        self.count += 1
        base = os.path.join(self.mail_dir, str(self.count))
        content = envelope.original_content or envelope.content
        parsed = email.message_from_bytes(content, policy=email.policy.default)
        sender = parsed["from"].addresses[0] if parsed["from"] else None
        record = {
            # When the relay took it (Unix seconds), for measuring delivery times.
            "received_at": time.time(),
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "authenticated_as": session.auth_data.get("login") if isinstance(session.auth_data, dict) else None,
            "mechanism": session.auth_data.get("mechanism") if isinstance(session.auth_data, dict) else None,
            "subject": str(parsed["subject"]) if parsed["subject"] is not None else None,
            "from_name": sender.display_name if sender else None,
            "from_address": sender.addr_spec if sender else None,
            # Lines as a reader sees them, whatever line ends carried them.
            "body": parsed.get_content().replace("\r\n", "\n"),
        }
        write_atomically(base + ".eml", content)
        write_atomically(base + ".json", json.dumps(record).encode())
        return "250 2.0.0 OK: queued as %d" % self.count


def make_authenticator(user, password, mode):
    def authenticate(server, session, envelope, mechanism, auth_data):
        login = auth_data.login.decode()
        given = auth_data.password.decode()
        if mode == "echo-auth":
            # A careless relay that repeats what it was sent: the client must withhold it.
            return AuthResult(success=False, handled=False, message="535 5.7.8 Authentication failed for %s/%s" % (login, given))
        if login == user and given == password:
            return AuthResult(success=True, auth_data={"login": login, "mechanism": mechanism})
        return AuthResult(success=False, handled=False)

    return authenticate


class Silent(asyncio.Protocol):
    """Accepts a connection and never answers: a relay that hangs."""

    def connection_made(self, transport):
        self.transport = transport
        print("connection", flush=True)


async def serve(options):
    loop = asyncio.get_running_loop()
    if options.mode == "silent":
        factory = Silent
    else:
        tls_context = None
        if options.cert:
            tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            tls_context.load_cert_chain(options.cert, options.key)
        recorder = Recorder(options.mail_dir, options.mode)
        if options.implicit_tls:
            settings = dict(hostname="relay.test", auth_require_tls=False)
        else:
            settings = dict(hostname="relay.test", tls_context=tls_context, auth_require_tls=tls_context is not None)
        if options.user:
            offered = set(options.mechanisms.split(","))
            settings["authenticator"] = make_authenticator(options.user, options.password, options.mode)
            settings["auth_exclude_mechanism"] = [name for name in ("PLAIN", "LOGIN") if name not in offered]

        def factory():
            return SMTP(recorder, **settings)

    implicit = None
    if options.implicit_tls:
        implicit = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        implicit.load_cert_chain(options.cert, options.key)
    server = await loop.create_server(factory, "127.0.0.1", options.port, ssl=implicit, reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    if options.ready:
        write_atomically(options.ready, str(port).encode())
    print("listening %d" % port, flush=True)
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mail-dir", required=True)
    parser.add_argument("--ready", help="a file to write the port to once listening, for scripts")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--implicit-tls", action="store_true")
    parser.add_argument("--mechanisms", default="PLAIN,LOGIN")
    parser.add_argument("--port", type=int, default=0, help="where to listen; 0 picks a free port")
    parser.add_argument(
        "--mode", default="accept",
        choices=["accept", "tempfail-rcpt", "reject-rcpt", "tempfail-data", "reject-data", "echo-auth", "silent"])
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
