"""portico_procs: real portico-controller and portico-gateway processes for integration tests.

Every process binds port 0 and reports its ports through --*-port-file; nothing sleeps to
synchronise: `wait_until` polls a condition with a deadline. Only the Python 3 standard library.

    with Controller(binaries, conf_dir, workdir) as c:
        c.wait_ready()
        with Gateway(binaries, workdir, controller=c, serve=["infra/web"]) as g:
            wait_until(lambda: g.info()["appliedVersion"] >= c.info()["head"], 10, "synced")
"""

import json
import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def binaries_from_args(argv=None):
    """The built binaries named by --build BUILD_DIR on the command line, and the rest of the
    arguments (for unittest.main)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    args, rest = parser.parse_known_args(argv)
    b = os.path.abspath(args.build)
    return (Binaries(os.path.join(b, "controller", "portico-controller"),
                     os.path.join(b, "gateway", "portico-gateway"),
                     os.path.join(b, "controller", "ctl", "portico-ctl"),
                     os.path.join(b, "plugins-out")),
            [sys.argv[0]] + rest)


class Timeout(AssertionError):
    pass


def wait_until(predicate, timeout, what, interval=0.02):
    """Polls predicate() until it returns a truthy value (returned) or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (urllib.error.URLError, OSError, KeyError, ValueError) as e:
            last_error = e
        if time.monotonic() >= deadline:
            raise Timeout("timed out after %.1fs waiting for %s%s" %
                          (timeout, what, " (last error: %s)" % last_error if last_error else ""))
        time.sleep(interval)


class Binaries:
    """Where the built binaries and plugins are."""

    def __init__(self, controller, gateway, ctl, plugin_dir):
        self.controller, self.gateway, self.ctl, self.plugin_dir = (
            controller, gateway, ctl, plugin_dir)


class Admin:
    """A tiny JSON client of an admin API."""

    def __init__(self, port, token=None):
        self.port = port
        self.base = "http://127.0.0.1:%d" % port
        self.token = token  # sent as "Authorization: Bearer <token>" when set

    def call(self, method, path, body=None, timeout=10, content_type="application/yaml"):
        data = body.encode() if isinstance(body, str) else body
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
                ctype = response.headers.get("Content-Type", "")
                return response.status, (json.loads(raw or b"null") if "json" in ctype
                                         else raw.decode(errors="replace"))
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw or b"null")
            except ValueError:
                return e.code, raw.decode(errors="replace")

    def get(self, path, timeout=10):
        status, body = self.call("GET", path, timeout=timeout)
        if status != 200:
            raise AssertionError("GET %s: %d %s" % (path, status, body))
        return body


def write_config_file(conf, name, text):
    """Writes conf/name atomically (the controller never sees half a file)."""
    path = os.path.join(conf, name)
    with open(path + ".tmp~", "w") as f:
        f.write(text)
    os.rename(path + ".tmp~", path)


def free_port(address="127.0.0.1"):
    """A free port below the kernel's ephemeral range, for a listener bound later (a Gateway's,
    a proxy's): a port from the ephemeral range could meanwhile go to a process binding port 0
    (a controller's admin or sync port)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(1000):
        port = random.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind((address, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def read_port(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read().strip()
    return int(text) if text else None


class Process:
    """A child process with its log in workdir/<name>.log."""

    def __init__(self, name, argv, workdir):
        self.name = name
        self.argv = argv
        self.workdir = workdir
        self.log_path = os.path.join(workdir, name + ".log")
        self.process = None

    def start(self):
        self.log = open(self.log_path, "a")
        self.process = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)
        return self

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def check_alive(self):
        if not self.alive():
            raise AssertionError("%s exited with %s: %s" %
                                 (self.name, self.process.returncode, self.tail()))

    def send_signal(self, sig):
        self.process.send_signal(sig)

    def tail(self, lines=15):
        try:
            self.log.flush()
        except (AttributeError, ValueError):
            pass
        with open(self.log_path, errors="replace") as f:
            return "\n".join(f.read().strip().splitlines()[-lines:])

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def wait_log(self, needle, timeout=20):
        """Waits until the log contains `needle`; returns the first line holding it."""
        def found():
            for line in self.log_text().splitlines():
                if needle in line:
                    return line
            return None
        return wait_until(found, timeout, "%r in %s's log" % (needle, self.name))

    def rss_bytes(self):
        """The process's resident set size (VmRSS of /proc/PID/status)."""
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS for %s" % self.name)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.process is None:
            return None
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGCONT)
                self.process.send_signal(sig)
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        code = self.process.returncode
        self.process = None
        return code

    def kill(self):
        return self.stop(signal.SIGKILL)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def run_ctl(binaries, *args, timeout=60):
    """Runs portico-ctl with `args`; returns (exit code, stdout, stderr)."""
    done = subprocess.run([binaries.ctl] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def report_failure(controller, gateway):
    """Writes what explains a set-up that did not come up to stderr: the controller's errors
    and the ends of both logs."""
    sys.stderr.write("controller errors: %s\n---- controller log\n%s\n---- gateway log\n%s\n"
                     % (controller.admin.get("/api/v1/errors"), controller.tail(30),
                        gateway.tail(30)))


def stop_all(owner, *names):
    """Stops the processes held in `owner`'s attributes `names` (those that were started)."""
    for name in names:
        if getattr(owner, name, None) is not None:
            getattr(owner, name).stop()


class Controller(Process):
    """portico-controller on `conf_dir` with admin and sync on port 0 (--testing)."""

    def __init__(self, binaries, conf_dir, workdir, name="controller", extra=(), sync_port=0,
                 log_level="info", debounce_ms=20):
        self.admin_port_file = os.path.join(workdir, name + ".admin.port")
        self.sync_port_file = os.path.join(workdir, name + ".sync.port")
        for f in (self.admin_port_file, self.sync_port_file):
            if os.path.exists(f):
                os.unlink(f)
        self.conf_dir = conf_dir
        self.binaries = binaries
        # conf_dir None: no --config-dir (the resources come from `extra`, e.g. --etcd-endpoints).
        source = ["--config-dir", conf_dir] if conf_dir is not None else []
        argv = [binaries.controller] + source + ["--plugin-dir",
                binaries.plugin_dir, "--admin-port", "0", "--admin-port-file",
                self.admin_port_file, "--sync-port", str(sync_port), "--sync-port-file",
                self.sync_port_file, "--testing", "--debounce-ms", str(debounce_ms),
                "--log-level", log_level] + list(extra)
        super().__init__(name, argv, workdir)
        self.admin = None
        self.sync_port = None
        self.start()

    def wait_ports(self, timeout=20):
        def ports():
            self.check_alive()
            a, s = read_port(self.admin_port_file), read_port(self.sync_port_file)
            return (a, s) if a and s else None
        a, s = wait_until(ports, timeout, "%s ports" % self.name)
        self.admin, self.sync_port = Admin(a), s
        return self

    def wait_ready(self, timeout=30):
        if self.admin is None:
            self.wait_ports(timeout)
        wait_until(lambda: self.check_alive() or self.admin.call("GET", "/readyz")[0] == 200,
                   timeout, "%s ready" % self.name)
        return self

    def sync_address(self):
        return "127.0.0.1:%d" % self.sync_port

    def info(self):
        return self.admin.get("/api/v1/info")

    def gateways(self):
        return self.admin.get("/api/v1/gateways")

    def objects(self, kind=None):
        path = "/api/v1/objects" + ("/" + urllib.parse.quote(kind, safe="") if kind else "")
        return self.admin.get(path)

    def apply(self, yaml_text, wait=True):
        status, body = self.admin.call("POST", "/api/v1/apply" + ("?wait=true" if wait else ""),
                                       yaml_text)
        if status != 200:
            raise AssertionError("apply: %d %s" % (status, body))
        return body


class Gateway(Process):
    """portico-gateway connected to `controller_address`, admin on port 0; `advertise`: its
    --advertise-address values (what Gateway status.addresses report), `workers`: --workers."""

    def __init__(self, binaries, workdir, controller_address, name="gateway", serve=(),
                 gateway_class=None, snapshot=True, extra=(), log_level="info", advertise=(),
                 workers=None):
        self.admin_port_file = os.path.join(workdir, name + ".admin.port")
        if os.path.exists(self.admin_port_file):
            os.unlink(self.admin_port_file)
        self.snapshot_path = os.path.join(workdir, name + ".snapshot") if snapshot else None
        argv = [binaries.gateway, "--name", name, "--controller", controller_address,
                "--plugin-dir", binaries.plugin_dir, "--admin-port", "0", "--admin-port-file",
                self.admin_port_file, "--log-level", log_level]
        for s in serve:
            argv += ["--gateway", s]
        if gateway_class:
            argv += ["--gateway-class", gateway_class]
        for a in advertise:
            argv += ["--advertise-address", a]
        if workers is not None:
            argv += ["--workers", str(workers)]
        if self.snapshot_path:
            argv += ["--snapshot-path", self.snapshot_path]
        argv += list(extra)
        super().__init__(name, argv, workdir)
        self.admin = None
        self.start()

    def wait_admin(self, timeout=20):
        def port():
            self.check_alive()
            return read_port(self.admin_port_file)
        self.admin = Admin(wait_until(port, timeout, "%s admin port" % self.name))
        return self

    def restart_admin(self):
        if os.path.exists(self.admin_port_file):
            os.unlink(self.admin_port_file)
        self.admin = None

    def info(self):
        return self.api("/api/v1/info")

    def api(self, path):
        if self.admin is None:
            self.wait_admin()
        return self.admin.get(path)

    def synced(self):
        return self.api("/api/v1/synced")

    def runtime(self):
        return self.api("/api/v1/runtime")

    def history(self):
        return self.api("/api/v1/runtime/history")


# ---------------------------------------------------------------------------------------------
# A private network namespace (`unshare -rn`): a test that binds real ports (80, 443) on
# loopback addresses of its choosing runs there, clear of anything else on the machine. It
# needs no privileges: the user namespace makes the process root of its own network namespace.

PRIVATE_NETWORK_ENV = "PORTICO_PRIVATE_NETNS"


def in_private_network():
    """True in a process that reexec_in_private_network() started (or a child of it)."""
    return os.environ.get(PRIVATE_NETWORK_ENV) == "1"


def private_network_unavailable():
    """None when `unshare -rn` works here, else why not (a sentence)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return "the unshare command (util-linux) is not installed"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    try:
        probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "unshare -rn failed: %s" % e
    if probe.returncode != 0:
        return "unshare -rn failed (unprivileged user namespaces disabled?): %s" % (
            probe.stderr.strip() or "exit %d" % probe.returncode)
    return None


def reexec_in_private_network(argv=None):
    """Runs `python3 argv` (default: this script and its arguments) again under `unshare -rn`
    with PRIVATE_NETWORK_ENV set; returns its exit status. Call private_network_unavailable()
    first."""
    argv = list(sys.argv if argv is None else argv)
    env = dict(os.environ, **{PRIVATE_NETWORK_ENV: "1"})
    child = subprocess.Popen([shutil.which("unshare"), "-rn", sys.executable] + argv, env=env)
    previous = signal.signal(signal.SIGTERM, lambda sig, _: child.send_signal(sig))
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                child.send_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)


def die_with_parent(sig=signal.SIGTERM):
    """Linux: this process gets `sig` when its parent exits (so a runner re-executed under
    unshare does not outlive the process that started it). False when not supported."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        parent = os.getppid()
        if libc.prctl(1, int(sig), 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            return False
        if os.getppid() != parent:  # the parent exited before prctl
            os.kill(os.getpid(), sig)
        return True
    except (OSError, AttributeError):
        return False


def bring_up_loopback(addresses=()):
    """In a private network namespace: sets lo up and adds `addresses` to it (127.0.0.0/8 is
    routed on lo already; IPv6 addresses other than ::1 need adding). Raises
    subprocess.CalledProcessError with ip's message on failure."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True, capture_output=True)
    for a in addresses:
        if ":" in a:
            subprocess.run(["ip", "-6", "addr", "add", a + "/128", "dev", "lo", "nodad"],
                           check=True, capture_output=True)
        elif not a.startswith("127."):
            subprocess.run(["ip", "addr", "add", a + "/32", "dev", "lo"], check=True,
                           capture_output=True)


class WrkRun:
    """wrk in the background (`threads` threads, `connections` connections, a request timeout
    of `timeout` or wrk's default when None); result() parses its totals."""

    def __init__(self, url, seconds, connections=20, threads=2, timeout="5s"):
        argv = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds]
        if timeout:
            argv += ["--timeout", timeout]
        self.process = subprocess.Popen(argv + [url], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)

    def result(self):
        out, _ = self.process.communicate(timeout=120)
        requests = int(re.search(r"(\d+) requests in", out).group(1))
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                           out)
        return {"requests": requests, "non2xx": int(non2xx.group(1)) if non2xx else 0,
                "socket_errors": sum(int(x) for x in errors.groups()) if errors else 0,
                "output": out}


class EchoProcess:
    """tests/conformance/echo_backend.py serving pod `pod` (namespace default) in its own process
    (not sharing the test's GIL); `port` is where it listens."""

    def __init__(self, pod):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance",
                              "echo_backend.py")
        self.process = subprocess.Popen(
            [sys.executable, script, "--backend", "127.0.0.1:0=default/%s" % pod],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()  # "listening on HOST:PORT ns/pod" (or an error)
        match = re.match(r"listening on 127\.0\.0\.1:(\d+) ", line)
        if not match:
            self.stop()
            raise AssertionError("echo backend %s did not start: %r" % (pod, line))
        self.port = int(match.group(1))

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process.stdout.close()
