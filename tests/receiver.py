#!/usr/bin/env python3
"""receiver.py PORT DIR: a plain HTTP server on 127.0.0.1:PORT that keeps each POST's body as
DIR/N.json and answers 200 (204 for Loki's push path, as Loki does). The OTLP/HTTP receiver the
export test checks traces with; for Loki it stands in for a real one, which neither Debian nor
this machine's npm registry packages (see the export test and docs/export.md)."""
import http.server
import os
import sys
import threading

port, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
lock = threading.Lock()
count = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            count[0] += 1
            name = os.path.join(out, "%06d.json" % count[0])
        with open(name + ".tmp", "wb") as f:
            f.write(body)
        os.rename(name + ".tmp", name)
        self.send_response(204 if self.path.startswith("/loki/") else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
