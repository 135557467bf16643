"""conformance_data: what the Gateway API conformance runners share.

The conformance data (../shared/conformance/gateway-api/, format in its README) is read, never
copied into the repository. This module holds the pieces both runners use:
  - reading the data directory (list_test_files, load_json);
  - writing one test file's controller config directory: the GatewayClass "portico", the base
    manifests, generated TLS Secrets, the file's manifests ({GATEWAY_CLASS_NAME} -> "portico"),
    runtimeSetup EndpointSlices, and optional extra objects / a per-object rewrite
    (write_config);
  - evaluating statusChecks through the controller's admin API (evaluate, poll_checks,
    describe_check, Outcome);
  - followUp actions (perform) and expected-failure lists (load_expected).

Used by status/run_status_conformance.py (status checks only) and run_conformance.py (status
checks, then HTTP cases through a real gateway). Only the Python 3 standard library and the
openssl command. Not thread-affine: every function may run on any thread; Outcome.with_gateway is
set once by a runner's main() before any evaluation.
"""

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import portico_procs  # noqa: E402,F401  (re-exported for the runners)

GATEWAY_API = "gateway.networking.k8s.io"
CONTROLLER_NAME = "portico.io/gateway-controller"
GATEWAY_CLASS = "portico"
SKIP_EXIT = 77

PASS, FAIL, SKIP = "passed", "failed", "skipped"


# ---------------------------------------------------------------------------------------------
# The data directory


def list_test_files(directory):
    """Sorted names of the test files in `directory` (not _base.json, not index.json)."""
    return sorted(f for f in os.listdir(directory)
                  if f.endswith(".json") and not f.startswith("_") and f != "index.json")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def all_cases(test):
    """Every case of a test file: its `cases`, then each followUp's."""
    cases = list(test.get("cases", []))
    for follow in test.get("followUps", []):
        cases += follow.get("cases", [])
    return cases


# ---------------------------------------------------------------------------------------------
# Admin API access (a portico_procs.Admin of the controller)


def object_path(ref, query=""):
    kind = ref["kind"] + ("." + ref["group"] if ref.get("group") else "")
    return "/api/v1/objects/%s/%s/%s%s" % (
        urllib.parse.quote(kind, safe=""), urllib.parse.quote(ref.get("namespace", ""), safe=""),
        urllib.parse.quote(ref["name"], safe=""), query)


def get_object(admin, ref):
    """The object as the controller shows it, or None when it has none."""
    status, body = admin.call("GET", object_path(ref))
    return body if status == 200 and isinstance(body, dict) else None


# ---------------------------------------------------------------------------------------------
# Check evaluation. Each evaluator returns (outcome, reason); outcome is PASS, FAIL, or SKIP
# (only what needs a gateway is wrong).


def conditions_match(conditions, want):
    """The condition list holds `want` ({type, status, reason|None})."""
    for c in conditions or []:
        if c.get("type") != want["type"] or c.get("status") != want["status"]:
            continue
        if want.get("reason") is None or c.get("reason") == want["reason"]:
            return True
    return False


def describe_condition(want):
    return "%s=%s(%s)" % (want["type"], want["status"], want.get("reason") or "any")


def needs_gateway(want):
    return want["type"] == "Programmed"


def stale_generation(obj, condition_lists):
    generation = (obj.get("metadata") or {}).get("generation")
    for conditions in condition_lists:
        for c in conditions or []:
            if c.get("observedGeneration") != generation:
                return "condition %s has observedGeneration %s, metadata.generation is %s" % (
                    c.get("type"), c.get("observedGeneration"), generation)
    return None


class Outcome:
    """Collects failures, remembering whether each needs a gateway (skipped when none runs)."""

    with_gateway = False  # set by a runner's main() when a gateway runs

    def __init__(self):
        self.hard = []
        self.gateway = []

    def fail(self, reason, gateway_only=False):
        (self.gateway if gateway_only and not Outcome.with_gateway else self.hard).append(reason)

    def result(self):
        if self.hard:
            return FAIL, "; ".join(self.hard + self.gateway)
        if self.gateway:
            return SKIP, "needs a gateway: " + "; ".join(self.gateway)
        return PASS, ""


def gateway_generation(gw):
    status = gw.get("status") or {}
    return stale_generation(gw, [status.get("conditions")])


def route_generation(route):
    parents = (route.get("status") or {}).get("parents") or []
    return stale_generation(route, [p.get("conditions") for p in parents])


def name_of(ref):
    return "%s %s/%s" % (ref["kind"], ref.get("namespace", ""), ref["name"])


def fetch_checked(admin, ref, generation_check):
    """Fetches `ref` and starts its Outcome with the generation check; (None, None) if absent."""
    obj = get_object(admin, ref)
    if obj is None:
        return None, None
    out = Outcome()
    stale = generation_check(obj)
    if stale:
        out.fail(stale)
    return obj, out


def eval_gateway_ready(check, admin):
    gw, out = fetch_checked(admin, check["gateway"], gateway_generation)
    if gw is None:
        return FAIL, "%s not found" % name_of(check["gateway"])
    status = gw.get("status") or {}
    if check.get("requireAddress") and not status.get("addresses"):
        out.fail("status.addresses is empty", gateway_only=True)
    listeners = status.get("listeners") or []
    spec_listeners = (gw.get("spec") or {}).get("listeners") or []
    if len(listeners) != len(spec_listeners):
        out.fail("status.listeners has %d entries, spec.listeners %d" %
                 (len(listeners), len(spec_listeners)))
    for listener in listeners:
        for want in check.get("allListenersConditions", []):
            if not conditions_match(listener.get("conditions"), want):
                out.fail("listener %s lacks %s" % (listener.get("name"), describe_condition(want)),
                         gateway_only=needs_gateway(want))
    return out.result()


def matching_parents(route, check):
    parents = (route.get("status") or {}).get("parents") or []
    want = check["parentRef"]
    strict = check.get("strictParentRef", False)
    found = []
    for entry in parents:
        ref = entry.get("parentRef") or {}
        if ref.get("name") != want["name"]:
            continue
        if strict:
            if ref.get("group") != GATEWAY_API or ref.get("kind") != "Gateway":
                continue
            if entry.get("controllerName") != CONTROLLER_NAME:
                continue
            if check.get("namespaceRequired"):
                if ref.get("namespace") != want.get("namespace"):
                    continue
            elif "namespace" in ref and ref["namespace"] != want.get("namespace"):
                continue
        elif "namespace" in ref and ref["namespace"] != want.get("namespace"):
            continue
        found.append(entry)
    return found


def eval_route_parent_condition(check, admin):
    route, out = fetch_checked(admin, check["route"], route_generation)
    if route is None:
        return FAIL, "%s not found" % name_of(check["route"])
    entries = matching_parents(route, check)
    want = check["condition"]
    if not entries:
        parents = [e.get("parentRef") for e in (route.get("status") or {}).get("parents") or []]
        out.fail("no status.parents entry for %s%s (parents: %s)" % (
            name_of(check["parentRef"]), " (strict)" if check.get("strictParentRef") else "",
            json.dumps(parents)))
    elif not any(conditions_match(e.get("conditions"), want) for e in entries):
        have = [[describe_condition(c) for c in e.get("conditions") or []] for e in entries]
        out.fail("parent lacks %s (has %s)" % (describe_condition(want), have),
                 gateway_only=needs_gateway(want))
    return out.result()


def eval_route_no_accepted_parents(check, admin):
    route, out = fetch_checked(admin, check["route"], route_generation)
    if route is None:
        return FAIL, "%s not found" % name_of(check["route"])
    parents = (route.get("status") or {}).get("parents") or []
    if parents:
        accepted_false = {"type": "Accepted", "status": "False", "reason": None}
        if len(parents) != 1 or not conditions_match(parents[0].get("conditions"), accepted_false):
            out.fail("status.parents is neither empty nor one entry with Accepted=False: %s" %
                     json.dumps(parents))
    return out.result()


def eval_gateway_listeners_status(check, admin):
    gw, out = fetch_checked(admin, check["gateway"], gateway_generation)
    if gw is None:
        return FAIL, "%s not found" % name_of(check["gateway"])
    listeners = (gw.get("status") or {}).get("listeners") or []
    if len(listeners) != len(check["listeners"]):
        out.fail("status.listeners has %d entries, want %d" % (len(listeners),
                                                               len(check["listeners"])))
    by_name = {l.get("name"): l for l in listeners}
    for want in check["listeners"]:
        have = by_name.get(want["name"])
        if have is None:
            out.fail("no status for listener %s" % want["name"])
            continue
        if "attachedRoutes" in want and have.get("attachedRoutes") != want["attachedRoutes"]:
            out.fail("listener %s: attachedRoutes %s, want %s" % (
                want["name"], have.get("attachedRoutes"), want["attachedRoutes"]))
        for c in want.get("conditions", []):
            if not conditions_match(have.get("conditions"), c):
                out.fail("listener %s lacks %s (has %s)" % (
                    want["name"], describe_condition(c),
                    [describe_condition(x) for x in have.get("conditions") or []]),
                    gateway_only=needs_gateway(c))
        if "supportedKinds" in want:
            kinds = have.get("supportedKinds") or []
            if not want["supportedKinds"]:
                if kinds:
                    out.fail("listener %s: supportedKinds %s, want none" % (want["name"], kinds))
            for k in want["supportedKinds"]:
                if not any(x.get("kind") == k["kind"] and
                           x.get("group", GATEWAY_API) == k.get("group", GATEWAY_API)
                           for x in kinds):
                    out.fail("listener %s: supportedKinds lacks %s" % (want["name"], k["kind"]))
    return out.result()


def eval_gateway_zero_attached_routes(check, admin):
    gw, out = fetch_checked(admin, check["gateway"], gateway_generation)
    if gw is None:
        return FAIL, "%s not found" % name_of(check["gateway"])
    listeners = (gw.get("status") or {}).get("listeners") or []
    if listeners and (len(listeners) != 1 or listeners[0].get("attachedRoutes") != 0):
        out.fail("status.listeners is neither empty nor one entry with attachedRoutes 0: %s" %
                 json.dumps([{"name": l.get("name"), "attachedRoutes": l.get("attachedRoutes")}
                             for l in listeners]))
    return out.result()


EVALUATORS = {
    "gatewayReady": eval_gateway_ready,
    "routeParentCondition": eval_route_parent_condition,
    "routeNoAcceptedParents": eval_route_no_accepted_parents,
    "gatewayListenersStatus": eval_gateway_listeners_status,
    "gatewayZeroAttachedRoutes": eval_gateway_zero_attached_routes,
}


def describe_check(check):
    kind = check["check"]
    if kind == "routeParentCondition":
        text = "%s %s parent %s %s" % (kind, name_of(check["route"]), name_of(check["parentRef"]),
                                       describe_condition(check["condition"]))
        return text + (" strict" if check.get("strictParentRef") else "")
    if kind == "routeNoAcceptedParents":
        return "%s %s" % (kind, name_of(check["route"]))
    return "%s %s" % (kind, name_of(check["gateway"]))


def evaluate(check, admin):
    evaluator = EVALUATORS.get(check["check"])
    if evaluator is None:
        return FAIL, "unknown check type %s" % check["check"]
    try:
        return evaluator(check, admin)
    except (urllib.error.URLError, OSError, ValueError) as e:
        return FAIL, "admin API: %s" % e


def poll_checks(checks, admin, deadline):
    """Polls every 100 ms until no check fails (skips are final) or the deadline."""
    while True:
        results = [evaluate(c, admin) for c in checks]
        if all(outcome != FAIL for outcome, _ in results) or time.monotonic() >= deadline:
            return results
        time.sleep(0.1)


def unique_descriptions(label, checks, seen):
    """label + describe_check(c) for each check, numbered '#2'... when repeated within `seen`."""
    out = []
    for check in checks:
        description = label + describe_check(check)
        seen[description] = seen.get(description, 0) + 1
        if seen[description] > 1:
            description += " #%d" % seen[description]
        out.append(description)
    return out


# ---------------------------------------------------------------------------------------------
# Manifests, secrets and the config directory


def generate_secret_pems(workdir, hosts):
    """A self-signed RSA 2048 pair as upstream's suite makes it (see _base.json)."""
    sans = []
    for host in hosts:
        if host.replace("*.", "", 1).replace(".", "").replace("-", "").isalnum() and host != "*":
            sans.append("DNS:" + host)
        else:
            sans.append("URI:" + host)
    key = os.path.join(workdir, "key.pem")
    cert = os.path.join(workdir, "cert.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "365", "-subj", "/CN=default/O=Acme Co",
         "-addext", "subjectAltName=" + ",".join(sans),
         "-addext", "keyUsage=keyEncipherment,digitalSignature",
         "-addext", "extendedKeyUsage=serverAuth"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rsa = subprocess.run(["openssl", "rsa", "-in", key, "-traditional"], check=True,
                         capture_output=True).stdout
    with open(cert, "rb") as f:
        return f.read(), rsa


def generated_secrets(base, workdir):
    """The base's generatedSecrets as kubernetes.io/tls Secret objects (PEMs made in workdir)."""
    secrets = []
    for i, s in enumerate(base.get("generatedSecrets", [])):
        d = os.path.join(workdir, "secret-%d" % i)
        os.makedirs(d)
        cert, key = generate_secret_pems(d, s.get("hosts", ["*"]))
        secrets.append({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": s["name"], "namespace": s["namespace"]},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": base64.b64encode(cert).decode(),
                     "tls.key": base64.b64encode(key).decode()},
        })
    return secrets


def substitute(value):
    if isinstance(value, str):
        return value.replace("{GATEWAY_CLASS_NAME}", GATEWAY_CLASS)
    if isinstance(value, list):
        return [substitute(v) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v) for k, v in value.items()}
    return value


# Where the infra-backend-v1 pods are when no runner says otherwise (the status runner runs no
# backends; run_conformance.py passes the addresses its echo backends listen on).
DEFAULT_ENDPOINTS = {"IPv4": ["127.0.2.1", "127.0.2.2"], "IPv6": ["fd00:2::1", "fd00:2::2"]}


def populate_endpoint_slices(manifests, setup, endpoints=None):
    """runtimeSetup populateEndpointSlices: endpoints an EndpointSlice controller would write.

    `endpoints` maps an addressType ("IPv4", "IPv6") to the infra-backend-v1 pod addresses."""
    endpoints = endpoints or DEFAULT_ENDPOINTS
    wanted = set(setup.get("endpointSlices", []))
    for m in manifests:
        meta = m.get("metadata", {})
        if m.get("kind") != "EndpointSlice":
            continue
        if "%s/%s" % (meta.get("namespace"), meta.get("name")) not in wanted:
            continue
        addresses = endpoints.get(m.get("addressType", "IPv4"), [])
        m["ports"] = [{"name": "first-port", "port": 3000, "protocol": "TCP"}]
        m["endpoints"] = [{"addresses": [a], "conditions": {"ready": True}} for a in addresses]


def file_name(prefix, index, obj):
    meta = obj.get("metadata", {})
    parts = [prefix, "%03d" % index, obj.get("kind", "x"), meta.get("namespace", ""),
             meta.get("name", "")]
    safe = "-".join(p for p in parts if p)
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in safe) + ".json"


def gateway_class_object():
    return {"apiVersion": GATEWAY_API + "/v1", "kind": "GatewayClass",
            "metadata": {"name": GATEWAY_CLASS}, "spec": {"controllerName": CONTROLLER_NAME}}


def config_groups(base, secrets, test, endpoints=None):
    """[(file prefix, [objects])] a test file's config directory holds, in apply order."""
    manifests = substitute(test.get("manifests", []))
    for step in test.get("runtimeSetup", []):
        if step.get("op") == "populateEndpointSlices":
            populate_endpoint_slices(manifests, step, endpoints)
    return [("00-class", [gateway_class_object()]), ("10-base", substitute(base["manifests"])),
            ("20-secret", secrets), ("30-test", manifests)]


def write_config(conf, base, secrets, test, endpoints=None, rewrite=None, extra=()):
    """Writes a test file's objects into the controller config directory `conf`.

    `rewrite(obj)` (optional) may change each object in place before it is written; `extra`
    objects are written last (prefix 40-local)."""
    groups = config_groups(base, secrets, test, endpoints)
    if extra:
        groups.append(("40-local", list(extra)))
    for prefix, objects in groups:
        for i, obj in enumerate(objects):
            if rewrite is not None:
                rewrite(obj)
            with open(os.path.join(conf, file_name(prefix, i, obj)), "w") as f:
                json.dump(obj, f, indent=1)


def perform(action, admin):
    """A followUp action through the admin API; None, or what went wrong."""
    if action.get("op") != "delete":
        return "unsupported action %s" % action.get("op")
    group = action["apiVersion"].rsplit("/", 1)[0] if "/" in action["apiVersion"] else ""
    ref = {"group": group, "kind": action["kind"], "namespace": action.get("namespace", ""),
           "name": action["name"]}
    status, body = admin.call("DELETE", object_path(ref, "?wait=true"), timeout=40)
    if status != 200:
        return "delete %s: HTTP %d %s" % (name_of(ref), status, body)
    return None


def load_expected(path):
    """The lines of an expected-failures file, without blanks and '#' comments."""
    expected = set()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                expected.add(line)
    return expected
