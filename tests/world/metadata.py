#!/usr/bin/python3
"""Fake cloud metadata service (AWS IMDS shape) for the test world.

Serves HTTP on 169.254.169.254:80 and [fd00:ec2::254]:80 (or the --listen addresses given) and
hands out obviously fake credentials under /latest/meta-data/iam/security-credentials/ROLE, so
an attack that reaches it has something to steal and the contact log proves it got there. IMDSv2
(PUT /latest/api/token) is answered too; a token is never required. Every request, and every
connection that sent none, is one JSON line in --log.

Usage: metadata.py --log FILE --timeout SECONDS [--listen ADDR:PORT]...
"""
import json

from common import (ContactHandler, ContactLog, arg_parser, http_server, parse_addr, run_forever,
                    serve_in_thread)

ROLE = "firebreak-world-role"
# Fake, recognisable as such, and the same every run so a test can grep a leak for them.
ACCESS_KEY_ID = "ASIAFIREBREAKFAKE001"
SECRET_ACCESS_KEY = "FIREBREAK/WORLD/FAKE/SECRET/KEY/NOT/REAL/00"
SESSION_TOKEN = "FIREBREAK-WORLD-FAKE-SESSION-TOKEN-0001"
IMDS_TOKEN = "FIREBREAK-WORLD-FAKE-IMDSV2-TOKEN"

CREDENTIALS = json.dumps({
    "Code": "Success",
    "LastUpdated": "2024-01-01T00:00:00Z",
    "Type": "AWS-HMAC",
    "AccessKeyId": ACCESS_KEY_ID,
    "SecretAccessKey": SECRET_ACCESS_KEY,
    "Token": SESSION_TOKEN,
    "Expiration": "2099-01-01T00:00:00Z",
}, indent=2).encode()

PAGES = {
    "/latest/meta-data/": b"ami-id\nhostname\niam/\ninstance-id\nlocal-ipv4\n",
    "/latest/meta-data/ami-id": b"ami-0f1eb7eakfake000",
    "/latest/meta-data/hostname": b"firebreak-world.internal",
    "/latest/meta-data/instance-id": b"i-0f1eb7eakfake000",
    "/latest/meta-data/local-ipv4": b"10.0.0.10",
    "/latest/meta-data/iam/": b"info\nsecurity-credentials/\n",
    "/latest/meta-data/iam/info":
        b'{"Code":"Success","InstanceProfileArn":"arn:aws:iam::000000000000:instance-profile/'
        + ROLE.encode() + b'"}',
    "/latest/meta-data/iam/security-credentials/": ROLE.encode(),
}
CREDS_PREFIX = "/latest/meta-data/iam/security-credentials/"


class Handler(ContactHandler):
    def route(self, **extra):
        path = self.path.split("?", 1)[0]
        if path == "/latest/api/token" and self.command == "PUT":
            self.reply(200, IMDS_TOKEN.encode(), **extra)
        elif path.startswith(CREDS_PREFIX) and len(path) > len(CREDS_PREFIX):
            # Any role name gets the keys: an attacker that guesses one must still be seen.
            self.reply(200, CREDENTIALS, "application/json", credentials=True, **extra)
        elif path in PAGES:
            self.reply(200, PAGES[path], **extra)
        else:
            self.reply(404, b"not found\n", **extra)


def main():
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--listen", type=parse_addr, action="append",
                   help="ADDR:PORT or [ADDR6]:PORT (default 169.254.169.254:80, [fd00:ec2::254]:80)")
    args = p.parse_args()
    listen = args.listen or [parse_addr("169.254.169.254:80"), parse_addr("[fd00:ec2::254]:80")]
    log = ContactLog(args.log, "metadata")
    for addr in listen:
        serve_in_thread(http_server(addr, Handler, log))
    run_forever("metadata", args.timeout)


if __name__ == "__main__":
    main()
