#!/usr/bin/python3
"""HTTPS stand-in for a model API (and for an upstream with a bad certificate) in the test world.

Serves TLS with --cert/--key (made by world.sh up: the world's own CA signs api.model.test's;
badcert.test's is self-signed) and answers every request with one JSON line: the method, path,
Host, the scheme and a SHA-256 of the Authorization it received, the TLS name the client asked
for and the body's length, so a test sees what arrived. Never the Authorization itself: behind
the gate's proxy it is a real credential, which must not reach the sandbox even as an echo (the
contact log, the world's own record on the host, has it whole). Every request, and every connection that sent none (a TLS
handshake the client gave up on included), is one JSON line in --log, with the body's bytes.

Usage: api.py --log FILE --timeout SECONDS --listen ADDR:PORT --cert PEM --key PEM --name NAME
"""
import hashlib
import json
import ssl

from common import (ContactHandler, ContactLog, arg_parser, http_server, parse_addr, run_forever,
                    serve_in_thread)


class Handler(ContactHandler):
    def route(self, **extra):
        body = extra.pop("body", "")  # logged as its length: reply() takes the answer's body
        auth = self.headers.get("Authorization")
        answer = {"method": self.command, "path": self.path, "host": self.headers.get("Host"),
                  "authorization_scheme": auth.split(" ", 1)[0] if auth else None,
                  "authorization_sha256": hashlib.sha256(auth.encode()).hexdigest()
                  if auth else None,
                  "sni": getattr(self.connection, "firebreak_sni", None),
                  "body_bytes": self.body_len,
                  "body_sha256": hashlib.sha256(self.body_raw).hexdigest()}
        headers = {}
        if self.path.split("?")[0] == "/v1/echo-auth":
            answer["echo_authorization"] = auth
            headers["X-Echo-Authorization"] = auth or "-"
        self.reply(200, (json.dumps(answer, sort_keys=True) + "\n").encode(),
                   "application/json", headers=headers, authorization=auth,
                   sni=answer["sni"], body_bytes=answer["body_bytes"], **extra)


def tls_context(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    def remember_sni(sock, name, _ctx):
        sock.firebreak_sni = name

    ctx.sni_callback = remember_sni
    return ctx


def main():
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--listen", type=parse_addr, required=True, help="ADDR:PORT")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--name", required=True, help="the service's name in the log")
    args = p.parse_args()
    log = ContactLog(args.log, args.name)
    server = http_server(args.listen, Handler, log)
    ctx = tls_context(args.cert, args.key)
    # The handshake runs in the serving thread (do_handshake_on_connect on the first read), so
    # one client that never finishes it holds up only its own thread.
    server.socket = ctx.wrap_socket(server.socket, server_side=True,
                                    do_handshake_on_connect=False)
    serve_in_thread(server)
    run_forever(args.name, args.timeout)


if __name__ == "__main__":
    main()
