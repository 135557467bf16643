"""cpu_quota.py: the proxy-bound layout of the proxy benchmark (bench.py --cpu-quota PCT): each
proxy under test runs in a cgroup of its own whose CFS bandwidth quota is PCT% of one CPU, so
the proxy (pinned to CPU 0) and not the client core (wrk and the upstream on CPU 1) is the
bottleneck.

Ways tried, in this order; the first that works is used, and "works" means a busy loop pinned
to CPU 0 inside a probe group was throttled (cpu.stat nr_throttled > 0) and got no more than
about PCT% of the CPU over ~1 s, not merely that the files could be written:

  cgroup2      a cgroup2 mount whose root offers the cpu controller: a group
               portico-bench-PID/NAME under this process's own cgroup, +cpu enabled down to it,
               cpu.max = "QUOTA PERIOD";
  cgroup1      a cgroup v1 hierarchy with the cpu controller (a hybrid or legacy host): the same
               group under this process's own cgroup there, cpu.cfs_period_us and
               cpu.cfs_quota_us (the same CFS bandwidth control as cpu.max);
  systemd-run  `systemd-run --scope -p CPUQuota=PCT% -p CPUQuotaPeriodSec=...` around the
               command (needs systemd as PID 1 and its bus).

A process enters its group before it execs (Popen preexec_fn writes its pid to cgroup.procs),
so every process it forks (nginx's worker, valgrind's tool) is in the group from the start.
When no way works, `Quota.method` is None and `Quota.failures` says why for each; the caller
says so and falls back to the unconstrained layout.

The period matters for latency: a group that used its quota waits for the next period, so a
request can be delayed by up to (100 - PCT)% of a period. The kernel's default period (100 ms)
would put 50 ms stalls in every p99; the default here is 10 ms.
"""

import os
import shutil
import subprocess
import time

BUSY = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < %f: pass\n"


def _mountinfo():
    """[(mount point, root within the hierarchy, fstype, super options)] of cgroup mounts."""
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, right = line.split(" - ", 1)
                lf, rf = left.split(), right.split()
                if rf[0] in ("cgroup", "cgroup2"):
                    out.append((lf[4], lf[3], rf[0], rf[2] if len(rf) > 2 else ""))
    except OSError:
        pass
    return out


def _own_cgroups():
    """{controller or "" (cgroup2): path} of this process (/proc/self/cgroup)."""
    out = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for c in (controllers.split(",") if controllers else [""]):
                out[c] = path
    return out


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _read(path):
    with open(path) as f:
        return f.read()


def _relative(path, root):
    """`path` (a cgroup path as /proc/PID/cgroup shows it) below the mount whose root is
    `root`."""
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root):]
    return path.strip("/")


class Group:
    """One cgroup with the quota (or, for systemd-run, a command prefix)."""

    def __init__(self, quota, name):
        self.quota, self.name = quota, name
        self.dir = None
        self.cgroup_path = None  # as /proc/PID/cgroup shows it
        if quota.method in ("cgroup1", "cgroup2"):
            self.dir = os.path.join(quota.base_dir, name)
            self.cgroup_path = quota.base_path.rstrip("/") + "/" + name
            os.makedirs(self.dir, exist_ok=True)
            quota.apply(self.dir)

    def preexec(self):
        """For Popen(preexec_fn=...): the child moves itself into the group before exec."""
        if self.dir is None:
            return None
        procs = os.path.join(self.dir, "cgroup.procs")

        def enter():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        return enter

    def prefix(self):
        """argv prefix (systemd-run) or []."""
        if self.quota.method != "systemd-run":
            return []
        q = self.quota
        return ["systemd-run", "--scope", "--quiet", "--collect", "-p",
                "CPUQuota=%g%%" % q.pct, "-p", "CPUQuotaPeriodSec=%dus" % q.period_us, "--"]

    def holds(self, pid):
        """Whether process `pid` is in this group (True when that cannot be told)."""
        if self.cgroup_path is None:
            return True
        try:
            for line in _read("/proc/%d/cgroup" % pid).splitlines():
                _, controllers, path = line.split(":", 2)
                if self.quota.method == "cgroup2" and controllers == "":
                    return path == self.cgroup_path
                if self.quota.method == "cgroup1" and "cpu" in controllers.split(","):
                    return path == self.cgroup_path
        except OSError:
            return True  # gone
        return False

    def stat(self):
        """{"periods", "throttled", "throttled_s"} so far, or None."""
        if self.dir is None:
            return None
        try:
            fields = dict(line.split() for line in _read(os.path.join(self.dir, "cpu.stat"))
                          .splitlines() if len(line.split()) == 2)
        except OSError:
            return None
        throttled_s = (int(fields["throttled_usec"]) / 1e6 if "throttled_usec" in fields else
                       int(fields.get("throttled_time", 0)) / 1e9)
        return {"periods": int(fields.get("nr_periods", 0)),
                "throttled": int(fields.get("nr_throttled", 0)), "throttled_s": throttled_s}

    def remove(self):
        if self.dir is not None and os.path.isdir(self.dir):
            try:
                os.rmdir(self.dir)
            except OSError as e:
                return "cannot remove %s: %s" % (self.dir, e)
        return None


class Quota:
    """Finds a way to apply a CPU quota (see the module's doc); `method` None when none works."""

    def __init__(self, pct, period_us, cpu):
        self.pct, self.period_us, self.cpu = pct, period_us, str(cpu)
        self.quota_us = max(1000, int(round(period_us * pct / 100.0)))
        self.method = None
        self.failures = []    # (method, reason)
        self.probe_note = ""  # what the probe measured with the method in use
        self.base_dir = self.base_path = None
        self.enabled = []     # cgroup2 subtree_control files we wrote "+cpu" to
        self.groups = {}
        self.tag = "portico-bench-%d" % os.getpid()
        for method in ("cgroup2", "cgroup1", "systemd-run"):
            try:
                self.method = method
                getattr(self, "_setup_" + method.replace("-", "_"))()
                self._probe()
                return
            except Exception as e:  # noqa: BLE001 - every failure is reported, then the next way
                self.failures.append((method, str(e)))
                self._teardown()
                self.method = None

    def describe(self):
        if self.method == "cgroup2":
            return "cgroup2 cpu.max \"%d %d\" in %s/<config>" % (self.quota_us, self.period_us,
                                                               self.base_dir)
        if self.method == "cgroup1":
            return ("cgroup v1 cpu controller: cpu.cfs_quota_us %d / cpu.cfs_period_us %d in "
                    "%s/<config>" % (self.quota_us, self.period_us, self.base_dir))
        if self.method == "systemd-run":
            return "systemd-run --scope -p CPUQuota=%g%% -p CPUQuotaPeriodSec=%dus" % (
                self.pct, self.period_us)
        return "none"

    # -- setup per method

    def _setup_cgroup2(self):
        mounts = [m for m in _mountinfo() if m[2] == "cgroup2"]
        if not mounts:
            raise RuntimeError("no cgroup2 mount")
        point, root, _, _ = mounts[0]
        controllers = _read(os.path.join(point, "cgroup.controllers")).split()
        if "cpu" not in controllers:
            raise RuntimeError("the cgroup2 mount %s offers no cpu controller (it offers: %s; "
                               "cpu is bound to a v1 hierarchy)" % (point, " ".join(controllers)
                                                                   or "none"))
        own = _own_cgroups().get("", "/")
        parent = os.path.join(point, _relative(own, root))
        # cgroup2's "no internal processes": +cpu can be enabled in the root, or in a group that
        # holds no process itself.
        self.base_dir = os.path.join(parent, self.tag)
        self.base_path = own.rstrip("/") + "/" + self.tag
        for d in (parent, self.base_dir):
            if d == self.base_dir:
                os.mkdir(d)
            control = os.path.join(d, "cgroup.subtree_control")
            if "cpu" not in _read(control).split():
                try:
                    _write(control, "+cpu")
                except OSError as e:
                    raise RuntimeError("cannot enable +cpu in %s: %s" % (control, e))
                self.enabled.append(control)

    def _setup_cgroup1(self):
        mounts = [m for m in _mountinfo() if m[2] == "cgroup" and "cpu" in m[3].split(",")]
        if not mounts:
            raise RuntimeError("no cgroup v1 hierarchy with the cpu controller")
        point, root, _, _ = mounts[0]
        own = _own_cgroups().get("cpu", "/")
        parent = os.path.join(point, _relative(own, root))
        if not os.path.exists(os.path.join(parent, "cpu.cfs_quota_us")):
            raise RuntimeError("%s has no cpu.cfs_quota_us (kernel without CFS bandwidth "
                               "control?)" % parent)
        self.base_dir = os.path.join(parent, self.tag)
        self.base_path = own.rstrip("/") + "/" + self.tag
        os.mkdir(self.base_dir)

    def _setup_systemd_run(self):
        if shutil.which("systemd-run") is None:
            raise RuntimeError("no systemd-run")
        done = subprocess.run(Group(self, "probe").prefix() + ["true"], capture_output=True,
                              text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError("systemd-run --scope failed: %s" % " ".join(
                (done.stderr or done.stdout).split())[:200])

    def apply(self, directory):
        if self.method == "cgroup2":
            _write(os.path.join(directory, "cpu.max"), "%d %d" % (self.quota_us, self.period_us))
        elif self.method == "cgroup1":
            _write(os.path.join(directory, "cpu.cfs_period_us"), str(self.period_us))
            _write(os.path.join(directory, "cpu.cfs_quota_us"), str(self.quota_us))

    def _probe(self, seconds=1.0):
        """A busy loop on the proxy CPU inside a probe group: the quota must show."""
        group = Group(self, "probe")
        before = group.stat()
        argv = group.prefix() + ["taskset", "-c", self.cpu, "python3", "-c", BUSY % seconds]
        start = time.monotonic()
        process = subprocess.Popen(argv, preexec_fn=group.preexec())
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = status
        wall = time.monotonic() - start
        share = (usage.ru_utime + usage.ru_stime) / wall
        after = group.stat()
        error = group.remove()
        limit = self.pct / 100.0 * 1.25 + 0.05
        throttled = after["throttled"] - before["throttled"] if after and before else None
        self.probe_note = ("probe: a busy loop on CPU %s got %.0f%% of it over %.1f s%s" % (
            self.cpu, 100 * share, wall, ", throttled in %d of %d periods" % (
                throttled, after["periods"] - before["periods"]) if throttled is not None
            else ""))
        if share > limit:
            raise RuntimeError("quota not enforced: %s (asked %g%%)" % (self.probe_note,
                                                                        self.pct))
        if throttled is not None and throttled == 0:
            raise RuntimeError("quota not observed: %s (asked %g%%)" % (self.probe_note,
                                                                        self.pct))
        if error:
            raise RuntimeError(error)

    # -- groups

    def group(self, name):
        if self.method is None:
            return None
        if name not in self.groups:
            self.groups[name] = Group(self, name)
        return self.groups[name]

    def _teardown(self):
        errors = [e for e in (g.remove() for g in self.groups.values()) if e]
        self.groups = {}
        if self.base_dir and os.path.isdir(self.base_dir):
            try:
                os.rmdir(self.base_dir)
            except OSError as e:
                errors.append("cannot remove %s: %s" % (self.base_dir, e))
        for control in reversed(self.enabled):
            if os.path.exists(control) and os.path.dirname(control) != self.base_dir:
                try:
                    _write(control, "-cpu")
                except OSError:
                    pass  # another group below uses it: leave it on
        self.enabled = []
        self.base_dir = self.base_path = None
        return errors

    def close(self):
        """Removes the groups (their processes must be gone); returns error strings."""
        return self._teardown()
