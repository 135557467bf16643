"""A real etcd server (/usr/bin/etcd) on loopback for integration tests and benchmarks, and
etcdctl against it.

etcd cannot report a port-0 bind, so its ports are found by binding port 0, reading the port and
closing the socket (portico_procs.free_port); when etcd then fails to start (the port was taken
meanwhile) new ports are picked and it is started again. Health is an answered `etcdctl get`
within a deadline.
"""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

from portico_procs import binaries_from_args, free_port, wait_until

SKIP_EXIT = 77  # CTest's SKIP_RETURN_CODE of the etcd tests


def etcd_binary():
    return shutil.which("etcd")


def etcdctl_binary():
    return shutil.which("etcdctl")


def etcd_test_main(name, tools, set_binaries):
    """The main() of an etcd integration test: skipped (SKIP_EXIT) without etcd, etcdctl or one
    of `tools`; else set_binaries(the binaries from --build) and the test cases of __main__."""
    for tool in tools:
        if shutil.which(tool) is None:
            print("%s: %s is not installed; skipped" % (name, tool))
            return SKIP_EXIT
    if etcd_binary() is None or etcdctl_binary() is None:
        print("%s: etcd or etcdctl is not installed (etcd-server, etcd-client); skipped" % name)
        return SKIP_EXIT
    binaries, argv = binaries_from_args()
    set_binaries(binaries)
    program = unittest.main(module="__main__", argv=argv, verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


class EtcdServer:
    def __init__(self, workdir=None, name="etcd"):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="portico-etcd-", dir=workdir)
        self.process = None
        self.client_port = None

    def endpoint(self):
        return "127.0.0.1:%d" % self.client_port

    def start(self, timeout=30):
        last = None
        for _ in range(5):
            self.client_port, peer = free_port(), free_port()
            if self.client_port == peer:
                continue
            client = "http://127.0.0.1:%d" % self.client_port
            peer_url = "http://127.0.0.1:%d" % peer
            self.log = open(os.path.join(self.dir, "etcd.log"), "a")
            self.process = subprocess.Popen(
                [etcd_binary(), "--name", self.name, "--data-dir", os.path.join(self.dir, "data"),
                 "--listen-client-urls", client, "--advertise-client-urls", client,
                 "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                 "--initial-cluster", "%s=%s" % (self.name, peer_url), "--log-level", "warn",
                 "--logger", "zap"],
                stdout=self.log, stderr=subprocess.STDOUT)
            try:
                wait_until(self._healthy, timeout, "etcd on %s to answer" % client)
                return self
            except AssertionError as e:
                last = e
                self.stop()
                shutil.rmtree(os.path.join(self.dir, "data"), ignore_errors=True)
        raise AssertionError("etcd did not start: %s\n%s" % (last, self.tail()))

    def _healthy(self):
        if self.process.poll() is not None:
            raise AssertionError("etcd exited: %s" % self.tail())
        done = subprocess.run([etcdctl_binary(), "--endpoints", self.endpoint(),
                               "--command-timeout=1s", "get", "health"],
                              capture_output=True, text=True, timeout=10,
                              env=dict(os.environ, ETCDCTL_API="3"))
        return done.returncode == 0

    def ctl(self, *args, input=None, check=True):
        done = subprocess.run([etcdctl_binary(), "--endpoints", self.endpoint()] + list(args),
                              capture_output=True, text=True, timeout=30, input=input,
                              env=dict(os.environ, ETCDCTL_API="3"))
        if check and done.returncode != 0:
            raise AssertionError("etcdctl %s: %s%s" % (" ".join(args), done.stdout, done.stderr))
        return done.stdout

    def put(self, key, value):
        # The value through stdin: etcdctl reads it when only the key is given.
        return self.ctl("put", key, input=value)

    def keys(self, prefix="/portico/"):
        """The resource keys under `prefix` (not the controllers' own <prefix>_leader and
        <prefix>_status/...)."""
        out = self.ctl("get", "--prefix", "--keys-only", prefix)
        return sorted(line for line in out.splitlines()
                      if line and not line[len(prefix):].startswith("_"))

    def tail(self, lines=20):
        try:
            with open(os.path.join(self.dir, "etcd.log")) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        if getattr(self, "log", None) is not None:
            self.log.close()
            self.log = None

    def remove(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class EtcdCluster:
    """`size` etcd members on loopback forming one cluster (a static --initial-cluster), for the
    high-availability tests: members can be killed and restarted on their ports and data."""

    def __init__(self, workdir=None, size=3):
        self.dir = tempfile.mkdtemp(prefix="portico-etcd-cluster-", dir=workdir)
        self.names = ["m%d" % i for i in range(size)]
        self.processes = {}
        self.logs = {}

    def endpoint(self, name):
        return "127.0.0.1:%d" % self.client_ports[name]

    def endpoints(self, names=None):
        return [self.endpoint(n) for n in (names or self.names)]

    def start(self, timeout=60):
        ports = set()
        while len(ports) < 2 * len(self.names):
            ports.add(free_port())
        ports = sorted(ports)
        self.client_ports = {n: ports[2 * i] for i, n in enumerate(self.names)}
        self.peer_ports = {n: ports[2 * i + 1] for i, n in enumerate(self.names)}
        self.initial = ",".join("%s=http://127.0.0.1:%d" % (n, self.peer_ports[n])
                                for n in self.names)
        for n in self.names:
            self.launch(n, "new")
        for n in self.names:
            self.wait_healthy(n, timeout)
        return self

    def launch(self, name, state):
        client = "http://127.0.0.1:%d" % self.client_ports[name]
        peer = "http://127.0.0.1:%d" % self.peer_ports[name]
        self.logs[name] = open(os.path.join(self.dir, name + ".log"), "a")
        self.processes[name] = subprocess.Popen(
            [etcd_binary(), "--name", name, "--data-dir", os.path.join(self.dir, name),
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", self.initial, "--initial-cluster-state", state,
             "--initial-cluster-token", "portico-ha", "--log-level", "warn", "--logger", "zap"],
            stdout=self.logs[name], stderr=subprocess.STDOUT)

    def healthy(self, name):
        if self.processes[name].poll() is not None:
            raise AssertionError("etcd %s exited: %s" % (name, self.tail(name)))
        return self.ctl_ok("get", "health", names=[name])

    def wait_healthy(self, name, timeout=60):
        wait_until(lambda: self.healthy(name), timeout, "etcd member %s to answer" % name)

    def wait_quorum(self, names, timeout=30):
        """Waits until `names` answer a linearizable read (they elected a leader among them)."""
        wait_until(lambda: self.ctl_ok("get", "health", names=names), timeout,
                   "etcd members %s to have a leader" % ",".join(names))

    def ctl_ok(self, *args, names=None):
        done = subprocess.run([etcdctl_binary(), "--endpoints", ",".join(self.endpoints(names)),
                               "--command-timeout=1s"] + list(args), capture_output=True,
                              text=True, timeout=30, env=dict(os.environ, ETCDCTL_API="3"))
        return done.returncode == 0

    def kill(self, name):
        p = self.processes[name]
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
        self.logs[name].close()

    def restart(self, name):
        self.launch(name, "existing")

    def ctl(self, *args, input=None, check=True, names=None):
        done = subprocess.run([etcdctl_binary(), "--endpoints", ",".join(self.endpoints(names)),
                               "--command-timeout=3s"] + list(args), capture_output=True,
                              text=True, timeout=30, input=input,
                              env=dict(os.environ, ETCDCTL_API="3"))
        if check and done.returncode != 0:
            raise AssertionError("etcdctl %s: %s%s" % (" ".join(args), done.stdout, done.stderr))
        return done.stdout

    def put(self, key, value, names=None):
        return self.ctl("put", key, input=value, names=names)

    def get(self, key, names=None):
        """The value of `key`, or None when absent."""
        out = self.ctl("get", key, "--print-value-only", names=names)
        return out[:-1] if out.endswith("\n") else (out or None)

    def tail(self, name, lines=20):
        try:
            with open(os.path.join(self.dir, name + ".log")) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def remove(self):
        for n in list(self.processes):
            self.kill(n)
        shutil.rmtree(self.dir, ignore_errors=True)
