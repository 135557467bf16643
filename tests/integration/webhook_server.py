#!/usr/bin/env python3
"""A scriptable webhook (authorization) server for the Webhook integration tests, run as its own
process. It listens on 127.0.0.1 (port 0: the chosen port is printed as "port N" on stdout's
first line) and answers every request by the first rule whose path prefix matches:

  --rule PREFIX=STATUS[,delay=SECONDS][,fail_first=N][,header=NAME:VALUE]...[,body=TEXT]

(fail_first=N: the first N calls matching the rule get their connection reset, no answer.)

A request to /__calls answers the JSON list of calls seen so far ({"method", "path", "headers",
"body"}),
/__count the number of calls (both are not recorded). Standard library only.
"""

import argparse
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def parse_rule(text):
    prefix, _, spec = text.partition("=")
    parts = spec.split(",")
    rule = {"prefix": prefix, "status": int(parts[0]), "delay": 0.0, "headers": [], "body": "",
            "fail_first": 0}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        if key == "delay":
            rule["delay"] = float(value)
        elif key == "header":
            name, _, v = value.partition(":")
            rule["headers"].append((name, v))
        elif key == "body":
            rule["body"] = value
        elif key == "fail_first":
            rule["fail_first"] = int(value)
    return rule


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rule", action="append", default=[])
    args = parser.parse_args()
    rules = [parse_rule(r) for r in args.rule]
    calls = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            body_in = self.rfile.read(length).decode(errors="replace") if length else ""
            if self.path in ("/__calls", "/__count"):
                with lock:
                    data = json.dumps(calls if self.path == "/__calls" else len(calls)).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            with lock:
                calls.append({"method": self.command, "path": self.path, "body": body_in,
                              "headers": {k.lower(): v for k, v in self.headers.items()}})
                rule = next((r for r in rules if self.path.startswith(r["prefix"])),
                            {"status": 200, "delay": 0, "headers": [], "body": "",
                             "fail_first": 0})
                reset = rule["fail_first"] > 0
                if reset:
                    rule["fail_first"] -= 1
            if reset:  # a connection error: RST, no answer
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if rule["delay"]:
                time.sleep(rule["delay"])  # the slow webhook under test, not synchronisation
            body = rule["body"].encode()
            self.send_response(rule["status"])
            for name, value in rule["headers"]:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sys.stdout.write("port %d\n" % server.server_address[1])
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
