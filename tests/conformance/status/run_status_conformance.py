#!/usr/bin/env python3
"""Status conformance: Gateway API conformance status checks against a real portico-controller.

For each test file of the conformance data (../shared/conformance/gateway-api/, see its README;
or extended/, whose _base.json is applied after the one it extends, generated CA ConfigMaps and
the Secrets they sign included):
start a fresh portico-controller (temporary config directory, admin port 0, --testing), write the
base manifests, the generated TLS Secrets, a GatewayClass "portico" (controllerName
portico.io/gateway-controller) and the file's manifests ({GATEWAY_CLASS_NAME} -> "portico"),
wait for /readyz, then poll every statusChecks entry through the admin API (100 ms interval,
deadline) and evaluate it as the README's "statusChecks format" says. followUps: perform their
actions (a delete goes through DELETE /api/v1/objects/...?wait=true), then their statusChecks.

With --gateway, a portico-gateway serving the GatewayClass connects to the controller over
ConfigSync, so Programmed conditions and Gateway addresses come from its acks; without it, a check
that fails only on those is reported as skipped. Prints one line per file (failures indented below it)
and a final line exactly "N passed, M failed, K skipped" (checks).

With --expected-failures FILE (lines "file.json: check description", '#' comments), the exit
status is 0 when every failing check is listed there (listed checks that now pass are reported,
to be removed); without it, the exit status is 0 when nothing failed. Exit 77 (skipped) when the
conformance directory is absent.

What both conformance runners share (data files, config directory, check evaluation) is in
../conformance_data.py. Only the Python 3 standard library and the openssl command are used.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from conformance_data import (  # noqa: E402
    FAIL, GATEWAY_CLASS, PASS, SKIP, SKIP_EXIT, CheckContext, Outcome, generated_secrets,
    list_test_files, load_base, load_expected, load_json, portico_procs, run_phase, test_phases,
    write_config)


def run_file(path, args, base, secrets):
    """Runs one test file; returns (file, [(description, outcome, reason)], error)."""
    name = os.path.basename(path)
    test = load_json(path)
    workdir = tempfile.mkdtemp(prefix="portico-status-")
    conf = os.path.join(workdir, "conf")
    os.makedirs(conf)
    results = []
    procs = []
    try:
        write_config(conf, base, secrets, test)
        binaries = portico_procs.Binaries(args.controller, args.gateway, None, args.plugin_dir)
        controller = portico_procs.Controller(binaries, conf, workdir, log_level="warn")
        procs.append(controller)
        controller.wait_ready(args.ready_timeout)
        admin = controller.admin
        if args.gateway:
            # One gateway serving every Gateway of the class, so Programmed and addresses come
            # from real acks.
            procs.append(portico_procs.Gateway(
                binaries, workdir, controller.sync_address(), gateway_class=GATEWAY_CLASS,
                snapshot=False, log_level="warn"))
        seen, context = {}, CheckContext(base["manifests"] + test.get("manifests", []),
                                         generated=secrets)
        for label, checks, actions, _ in test_phases(test):
            results += run_phase(label, checks, actions, admin, time.monotonic() + args.deadline,
                                 seen, context)
        return name, results, None
    except (RuntimeError, OSError, subprocess.CalledProcessError, AssertionError) as e:
        return name, results, str(e)
    finally:
        for p in reversed(procs):
            p.stop()
        if args.keep:
            print("  (kept %s)" % workdir, file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--controller", required=True, help="portico-controller binary")
    parser.add_argument("--plugin-dir", required=True, help="directory of the built plugins")
    parser.add_argument("--gateway", help="portico-gateway binary: Programmed and addresses are "
                        "then checked (else skipped)")
    parser.add_argument("--conformance-dir", required=True,
                        help="the Gateway API conformance data (../shared/conformance/gateway-api)")
    parser.add_argument("--expected-failures", help="file of 'file.json: check' lines")
    parser.add_argument("--write-expected-failures",
                        help="write the failing checks to this file (to seed the list)")
    parser.add_argument("--deadline", type=float, default=5.0,
                        help="seconds to poll the checks of one phase once ready (default 5)")
    parser.add_argument("--ready-timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=4, help="files run in parallel")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    parser.add_argument("--quiet", action="store_true",
                        help="print failing checks only when they are not expected")
    parser.add_argument("files", nargs="*", help="only these test files (names)")
    args = parser.parse_args()
    Outcome.with_gateway = bool(args.gateway)

    if not os.path.isdir(args.conformance_dir):
        print("SKIP: conformance data not found at %s (it lives in ../shared/conformance/"
              "gateway-api next to the repository)" % args.conformance_dir)
        return SKIP_EXIT
    if shutil.which("openssl") is None:
        print("SKIP: the openssl command is needed to generate the TLS Secrets")
        return SKIP_EXIT
    base = load_base(args.conformance_dir)  # extended/: ../_base.json first, then its own
    files = list_test_files(args.conformance_dir)
    if args.files:
        files = [f for f in files if f in set(args.files)]

    secrets_dir = tempfile.mkdtemp(prefix="portico-status-secrets-")
    try:
        secrets = generated_secrets(base, secrets_dir)
    finally:
        shutil.rmtree(secrets_dir, ignore_errors=True)

    expected = load_expected(args.expected_failures) if args.expected_failures else None
    paths = [os.path.join(args.conformance_dir, f) for f in files]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda p: run_file(p, args, base, secrets), paths))

    totals = {PASS: 0, FAIL: 0, SKIP: 0}
    failing, unexpected, now_passing = [], [], []
    for name, results, error in runs:
        counts = {PASS: 0, FAIL: 0, SKIP: 0}
        for description, outcome, _ in results:
            counts[outcome] += 1
        if error:
            counts[FAIL] += 1
            results = results + [("run", FAIL, error)]
        for k in totals:
            totals[k] += counts[k]
        verdict = "FAIL" if counts[FAIL] else "PASS"
        print("%s %s: %d passed, %d failed, %d skipped" % (verdict, name, counts[PASS],
                                                          counts[FAIL], counts[SKIP]))
        for description, outcome, reason in results:
            key = "%s: %s" % (name, description)
            listed = expected is not None and key in expected
            if outcome == FAIL:
                failing.append(key)
                if expected is not None and not listed:
                    unexpected.append(key)
                if not args.quiet or (expected is not None and not listed):
                    print("    FAIL%s %s: %s" % (
                        "" if expected is None else (" (expected)" if listed else " (NEW)"),
                        description, reason))
            elif listed:
                now_passing.append(key)

    if args.write_expected_failures:
        with open(args.write_expected_failures, "w") as f:
            f.write("# Status-conformance checks that fail today, one 'file: check' per line.\n"
                    "# Remove lines as the semantics land; the test fails on any failure not "
                    "listed here.\n")
            for key in sorted(failing):
                f.write(key + "\n")
    exit_code = 0
    if expected is not None:
        print("expected failures: %d failing checks, %d of them listed, %d new; "
              "%d listed checks now pass" % (len(failing), len(failing) - len(unexpected),
                                             len(unexpected), len(now_passing)))
        for key in now_passing:
            print("    now passes (remove from the list): %s" % key)
        exit_code = 1 if unexpected else 0
    else:
        exit_code = 1 if totals[FAIL] else 0
    print("%d passed, %d failed, %d skipped" % (totals[PASS], totals[FAIL], totals[SKIP]))
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
