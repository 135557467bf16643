#!/usr/bin/env python3
"""fault_relay: a TCP relay of our own between a gateway and the controller's sync port, in its
own process, so that link faults are real process and socket states (issue 15, item 6):

- delay: every chunk read on one side is written to the other `delay` ms after it was read
  (per direction: "up" is client -> target, "down" target -> client), order kept;
- rate: bytes per second per direction (0: unlimited), so a big snapshot takes a while to
  stream and a test can act in the middle of it;
- black hole: SIGSTOP the relay. Its sockets stay open and the kernel still completes new
  connections into the listening socket's backlog, but no byte moves either way until SIGCONT
  (what a dead router or a partition looks like to both ends: only keepalive finds it);
- cut: SIGKILL the relay: the kernel closes every relayed socket, both ends see EOF/RST at
  once. The listening socket belongs to the test (inherited by the relay process), so a relay
  restarted on it keeps the port, and clients reconnecting meanwhile wait in the backlog.

A close (or error) on either side of a relayed connection cuts the other side at once with a
reset, dropping what was queued: bytes in flight on a link that died are lost, they are not
delivered after the peer is gone.

Control: one command per line on the relay's stdin, one answer line on its stdout:
  delay UP_MS DOWN_MS | rate UP_BPS DOWN_BPS | target HOST:PORT (new connections) | stats
  (answers JSON: {"up": bytes, "down": bytes, "accepted": n, "open": n}) | ping
Answers are "ok" or JSON; a bad command answers "error: ...".

    relay = FaultRelay("127.0.0.1:%d" % controller.sync_port, workdir)
    gateway = Gateway(..., controller_address=relay.address())
    relay.set_delay(300, 300); relay.black_hole(); relay.heal(); relay.cut(); relay.stop()

Only the Python 3 standard library (asyncio in the relay process).
"""

import asyncio
import json
import os
import signal
import socket
import struct
import subprocess
import sys

CHUNK = 64 * 1024
QUEUE_CHUNKS = 16  # per direction: what the relay holds before it stops reading a side


class _Relay:
    """The relay process's state: current settings and counters."""

    def __init__(self, target):
        self.target = target
        self.delay = {"up": 0.0, "down": 0.0}  # seconds
        self.rate = {"up": 0, "down": 0}  # bytes per second, 0: unlimited
        self.bytes = {"up": 0, "down": 0}
        self.accepted = 0
        self.open = 0

    async def serve_connection(self, client_reader, client_writer):
        self.accepted += 1
        host, port = self.target.rsplit(":", 1)
        try:
            target_reader, target_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            _abort(client_writer)
            return
        self.open += 1
        done = asyncio.Event()
        pipes = [asyncio.ensure_future(self.pipe(client_reader, target_writer, "up", done)),
                 asyncio.ensure_future(self.pipe(target_reader, client_writer, "down", done))]
        await done.wait()
        for p in pipes:
            p.cancel()
        _abort(client_writer)
        _abort(target_writer)
        self.open -= 1

    async def pipe(self, reader, writer, direction, done):
        """Moves bytes from reader to writer with this direction's delay and rate; sets `done`
        when either side closes or fails."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue(maxsize=QUEUE_CHUNKS)

        async def read_side():
            # EOF or an error cuts the connection at once, whatever is still queued.
            try:
                while True:
                    data = await reader.read(CHUNK)
                    if not data:
                        break
                    await queue.put((loop.time() + self.delay[direction], data))
            except OSError:
                pass
            done.set()

        async def write_side():
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                while data:
                    rate = self.rate[direction]
                    piece = data[:max(1024, rate // 50)] if rate else data
                    data = data[len(piece):]
                    writer.write(piece)
                    await writer.drain()
                    self.bytes[direction] += len(piece)
                    if rate:
                        await asyncio.sleep(len(piece) / rate)

        reading = asyncio.ensure_future(read_side())
        try:
            await write_side()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            reading.cancel()
            done.set()

    def command(self, line):
        words = line.split()
        if not words:
            return "error: empty command"
        verb, args = words[0], words[1:]
        try:
            if verb == "delay" and len(args) == 2:
                self.delay = {"up": float(args[0]) / 1000, "down": float(args[1]) / 1000}
            elif verb == "rate" and len(args) == 2:
                self.rate = {"up": int(args[0]), "down": int(args[1])}
            elif verb == "target" and len(args) == 1 and ":" in args[0]:
                self.target = args[0]
            elif verb == "stats" and not args:
                return json.dumps({"up": self.bytes["up"], "down": self.bytes["down"],
                                   "accepted": self.accepted, "open": self.open})
            elif verb != "ping" or args:
                return "error: unknown command %r" % line.strip()
        except ValueError as e:
            return "error: %s" % e
        return "ok"


def _abort(writer):
    """Closes a relayed socket with a reset (SO_LINGER 0), dropping what is queued."""
    sock = writer.get_extra_info("socket")
    try:
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


async def _relay_main(listen_fd, target):
    relay = _Relay(target)
    listener = socket.socket(fileno=listen_fd)
    listener.setblocking(False)
    server = await asyncio.start_server(relay.serve_connection, sock=listener)
    loop = asyncio.get_running_loop()
    control = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
    print("ready", flush=True)
    async with server:
        while True:
            line = await control.readline()
            if not line:
                return  # the test closed our stdin: exit
            print(relay.command(line.decode()), flush=True)


class FaultRelay:
    """The test's handle on a relay process forwarding a listening socket it owns (127.0.0.1,
    port 0) to `target` ("host:port"). Threading: one test thread."""

    def __init__(self, target, workdir, name="relay"):
        self.name = name
        self.target = target
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        self.log_path = os.path.join(workdir, name + ".log")
        self.process = None
        self.stopped = False
        self.delay = (0, 0)
        self.rate = (0, 0)
        self.start()

    def address(self):
        return "127.0.0.1:%d" % self.port

    def start(self):
        """Starts a relay process on the listening socket with the current settings."""
        assert self.process is None
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--listen-fd",
             str(self.listener.fileno()), "--target", self.target],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            pass_fds=(self.listener.fileno(),))
        log.close()
        line = self.process.stdout.readline().strip()
        if line != "ready":
            raise AssertionError("%s did not start: %r" % (self.name, line))
        self.stopped = False
        if self.delay != (0, 0):
            self.set_delay(*self.delay)
        if self.rate != (0, 0):
            self.set_rate(*self.rate)

    def _call(self, line):
        if self.process is None or self.stopped:
            raise AssertionError("%s is %s" % (self.name, "stopped" if self.stopped else "dead"))
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if answer.startswith("error") or not answer:
            raise AssertionError("%s: %r answered %r" % (self.name, line, answer))
        return answer

    def set_delay(self, up_ms, down_ms):
        self.delay = (up_ms, down_ms)
        self._call("delay %d %d" % self.delay)

    def set_rate(self, up_bps, down_bps):
        self.rate = (up_bps, down_bps)
        self._call("rate %d %d" % self.rate)

    def set_target(self, target):
        """Where new connections go (a controller restarted on another port)."""
        self.target = target
        self._call("target " + target)

    def stats(self):
        return json.loads(self._call("stats"))

    def black_hole(self):
        """SIGSTOP: nothing moves, every socket stays open."""
        self.process.send_signal(signal.SIGSTOP)
        self.stopped = True

    def heal(self):
        """Ends a black hole (SIGCONT) or, after a cut, starts a new relay process."""
        if self.process is None:
            self.start()
        elif self.stopped:
            self.process.send_signal(signal.SIGCONT)
            self.stopped = False
            self._call("ping")

    def cut(self, restart=True):
        """SIGKILL: every relayed connection ends at once; `restart`: a new relay takes over
        the listening socket (connections made meanwhile wait in its backlog)."""
        self.process.kill()
        self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()
        self.process = None
        self.stopped = False
        if restart:
            self.start()

    def stop(self):
        if self.process is not None:
            self.cut(restart=False)
        self.listener.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def main():
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--listen-fd", type=int, required=True)
    parser.add_argument("--target", required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    asyncio.run(_relay_main(args.listen_fd, args.target))


if __name__ == "__main__":
    main()
