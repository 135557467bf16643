#!/usr/bin/env python3
"""plugin_walkthrough: follows section 4 of docs/plugins.md as a newcomer would, from an empty
directory, with what the page itself says, so the page and the test cannot diverge:

  - every fenced block annotated `file=PATH` is written to PATH in an empty temp directory;
  - every `sh step=NAME` block is run there with bash (-euo pipefail), in the page's order, with
    PORTICO_SRC and PORTICO_BUILD set as the page asks: `build` installs the SDK from the build
    tree to a prefix and builds the plugin out of tree against it alone, `verify` runs
    `portico-ctl plugin verify` and the plugin's ctest, `plugins` fills the plugin directory and
    copies the example configuration;
  - the page's "Run it" block (fixed ports) is done here on port 0 with tests/integration's
    portico_procs (the copied configuration is pointed at this test's gateway port and echo
    backend), with the plugin directory the page filled;
  - an `expect=NAME` block lists lines step NAME must print (ages aside);
  - before `apply` the route answers without the page's header; `apply` (portico-ctl apply and
    get, against this controller, printing what the page shows) makes every response of the route carry the header and value
    written in the page's HeaderStamp; the controller reports it Accepted; `delete` removes the
    header again.

Run: plugin_walkthrough.py --build BUILD_DIR [--source SRC_DIR] [--keep]. The out-of-tree build
uses ccache when it is installed (CMAKE_CXX_COMPILER_LAUNCHER; the page's commands stay as a
newcomer types them). Waits have deadlines; nothing sleeps to synchronise.
"""

import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from portico_procs import (Binaries, Controller, Gateway, free_port,  # noqa: E402
                           report_failure, wait_until)
from echo_backend import EchoPod, EchoServers  # noqa: E402

STEPS = ["build", "verify", "plugins", "apply", "delete"]
FENCE = re.compile(r"^```(\w+)((?: +\w+=\S+)*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(doc):
    """[(lang, {attr: value}, body)] of the fenced blocks of `doc` that carry attributes."""
    out = []
    for m in FENCE.finditer(doc):
        attrs = dict(a.split("=", 1) for a in m.group(2).split())
        if attrs:
            out.append((m.group(1), attrs, m.group(3)))
    return out


def fail(message):
    print("plugin_walkthrough: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run_step(name, script, cwd, env, log, expect=None):
    """Runs one `sh step=` block; with `expect` (an `expect=` block of the page), each of its
    lines must be a line of the step's output, ages (`0s`, `3s`) and runs of spaces aside."""
    t0 = time.monotonic()
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900, text=True)
    with open(log, "a") as f:
        f.write("==== step %s\n%s\n%s" % (name, script, r.stdout))
    if r.returncode != 0:
        print(r.stdout[-6000:], file=sys.stderr)
        fail("step %s of docs/plugins.md exited %d" % (name, r.returncode))

    def norm(line):
        return re.sub(r"\b\d+s$", "<age>", " ".join(line.split()))
    got = {norm(line) for line in r.stdout.splitlines()}
    for line in (expect or "").splitlines():
        if line.strip() and norm(line) not in got:
            print(r.stdout, file=sys.stderr)
            fail("step %s printed no line %r (docs/plugins.md shows it)" % (name, line))
    print("plugin_walkthrough: step %s ok (%.1f s)" % (name, time.monotonic() - t0))


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def field(yaml_text, name):
    m = re.search(r"^\s*%s:\s*(\S+)\s*$" % re.escape(name), yaml_text, re.M)
    if not m:
        fail("the page's HeaderStamp has no %s" % name)
    return m.group(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", default=os.path.join(HERE, "..", ".."))
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    src, build = os.path.abspath(args.source), os.path.abspath(args.build)
    with open(os.path.join(src, "docs", "plugins.md")) as f:
        doc = f.read()

    found = blocks(doc)
    files = [(a["file"], body) for _, a, body in found if "file" in a]
    steps = [(a["step"], body) for lang, a, body in found if "step" in a and lang == "sh"]
    expects = {a["expect"]: body for _, a, body in found if "expect" in a}
    if [s for s, _ in steps] != STEPS:
        fail("docs/plugins.md has the shell steps %s, expected %s in that order"
             % ([s for s, _ in steps], STEPS))
    stamp = [body for path, body in files if path.endswith(".yaml")]
    if len(files) < 5 or len(stamp) != 1:
        fail("docs/plugins.md: expected the manifest, schema, source, CMakeLists and one YAML "
             "object as file= blocks, found %s" % [p for p, _ in files])
    stamp = stamp[0]
    header, value = field(stamp, "header"), field(stamp, "value")
    route = re.search(r"kind: HTTPRoute, name: ([\w-]+)", stamp).group(1)

    work = tempfile.mkdtemp(prefix="portico-walkthrough-")
    log = os.path.join(work, "steps.log")
    procs = {}
    echo = None
    try:
        for path, body in files:
            target = os.path.join(work, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as f:
                f.write(body)
        env = dict(os.environ, PORTICO_SRC=src, PORTICO_BUILD=build)
        if shutil.which("ccache"):
            env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
            # Relative to the (fresh, randomly named) work directory: every run hits the cache.
            env["CCACHE_BASEDIR"] = work
            env["CCACHE_NOHASHDIR"] = "1"
        if shutil.which("ninja"):
            env.setdefault("CMAKE_GENERATOR", "Ninja")
        step = dict(steps)
        for name in ("build", "verify", "plugins"):
            run_step(name, step[name], work, env, log)

        # "Run it", on port 0: the copied example configuration is pointed at this test's ports.
        echo = EchoServers([EchoPod("127.0.0.1", 0, "default", "echo-v1")])
        echo.start()
        gw_port = free_port()
        conf = os.path.join(work, "config")
        for name in os.listdir(conf):
            p = os.path.join(conf, name)
            with open(p) as f:
                text = f.read()
            text = re.sub(r"\bport: 8080\b", "port: %d" % gw_port, text)
            text = re.sub(r"\b9001\b", str(echo.pods[0].port), text)
            with open(p, "w") as f:
                f.write(text)
        binaries = Binaries(os.path.join(build, "controller", "portico-controller"),
                            os.path.join(build, "gateway", "portico-gateway"),
                            os.path.join(build, "controller", "ctl", "portico-ctl"),
                            os.path.join(work, "plugins"))
        run_dir = os.path.join(work, "run")
        os.makedirs(run_dir)
        procs["controller"] = controller = Controller(binaries, conf, run_dir)
        controller.wait_ready()
        procs["gateway"] = Gateway(binaries, run_dir, controller.sync_address(),
                                   serve=["default/web"], snapshot=False)
        path = "/v1/walkthrough"
        hname = header.lower()
        try:
            wait_until(lambda: get(gw_port, path)[0] == 200, 60, "the gateway to route " + path)
            status, headers, body = get(gw_port, path)
            if hname in headers:
                fail("%s carries %s before any HeaderStamp exists" % (path, header))

            env["PORTICO_SERVER"] = controller.admin.base
            run_step("apply", step["apply"], work, env, log, expects.get("apply"))
            wait_until(lambda: get(gw_port, path)[1].get(hname) == value, 30,
                       "%s: %s on %s" % (header, value, path))
            status, headers, body = get(gw_port, path)
            if status != 200 or b"echo-v1" not in body:
                fail("stamped response is not the backend's: %d %r" % (status, body[:200]))
            kind = urllib.parse.quote("HeaderStamp.walkthrough.example.io", safe="")
            obj = controller.admin.get("/api/v1/objects/%s/default/%s" % (
                kind, field(stamp, "name")))
            conds = [c for a in (obj.get("status") or {}).get("ancestors") or []
                     if a["ancestorRef"]["name"] == route for c in a.get("conditions") or []]
            if not any(c["type"] == "Accepted" and c["status"] == "True" for c in conds):
                fail("HeaderStamp not Accepted on route %s: %s" % (route, obj.get("status")))

            run_step("delete", step["delete"], work, env, log)
            wait_until(lambda: hname not in get(gw_port, path)[1], 30,
                       "%s gone from %s after delete" % (header, path))
        except AssertionError:
            report_failure(controller, procs["gateway"])
            raise
        print("plugin_walkthrough: OK (%s: %s appeared on %s after apply and went away after "
              "delete)" % (header, value, path))
    finally:
        for name in ("gateway", "controller"):
            if name in procs:
                procs[name].stop()
        if echo is not None:
            echo.stop()
        if args.keep:
            print("plugin_walkthrough: kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
