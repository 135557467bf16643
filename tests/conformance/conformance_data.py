"""conformance_data: what the Gateway API conformance runners share.

The conformance data (../shared/conformance/gateway-api/, format in its README) is read, never
copied into the repository. This module holds the pieces both runners use:
  - reading the data directory (list_test_files, load_json, load_base: a _base.json with the
    bases it "extends" applied first, as extended/_base.json extends ../_base.json);
  - writing one test file's controller config directory: the GatewayClass "portico", the base
    manifests, generated TLS Secrets and CA ConfigMaps, the file's manifests
    ({GATEWAY_CLASS_NAME} -> "portico", {GATEWAY_CONTROLLER_NAME} -> our controllerName),
    runtimeSetup EndpointSlices, and optional extra objects / a per-object rewrite
    (write_config);
  - evaluating statusChecks through the controller's admin API (evaluate, poll_checks,
    describe_check, Outcome; CheckContext for the checks of extended/README.md section 5 that
    need more than the admin API);
  - phases: followUp actions (perform: delete, and extended/README.md's patch and create) and
    their checks (test_phases, run_phase); expected-failure lists (load_expected).

Used by status/run_status_conformance.py (status checks only) and run_conformance.py (status
checks, then HTTP cases through a real gateway). Only the Python 3 standard library and the
openssl command. Not thread-affine: every function may run on any thread; Outcome.with_gateway is
set once by a runner's main() before any evaluation.
"""

import base64
import calendar
import copy
import json
import os
import re
import socket
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


BASE_LISTS = ("manifests", "echoBackends", "generatedConfigMaps", "generatedSecrets")


def load_base(directory):
    """`directory`/_base.json, after the bases it extends: a base with "extends" (a path relative
    to its folder, e.g. extended/_base.json: "../_base.json") is applied after that one, so its
    BASE_LISTS are appended to the extended base's. `layers`: the files, in application order."""
    layers, path = [], os.path.join(directory, "_base.json")
    while path is not None:
        path = os.path.normpath(path)
        if any(path == p for p, _ in layers):
            raise ValueError("%s extends itself" % path)
        base = load_json(path)
        layers.insert(0, (path, base))
        parent = base.get("extends")
        path = os.path.join(os.path.dirname(path), parent) if parent else None
    merged = {k: v for k, v in layers[-1][1].items() if k not in BASE_LISTS}
    for key in BASE_LISTS:
        merged[key] = [item for _, base in layers for item in base.get(key, [])]
    merged["layers"] = [p for p, _ in layers]
    return merged


def all_cases(test):
    """Every case of a test file: its `cases`, then each followUp's."""
    cases = list(test.get("cases", []))
    for follow in test.get("followUps", []):
        cases += follow.get("cases", [])
    return cases


# ---------------------------------------------------------------------------------------------
# Admin API access (a portico_procs.Admin of the controller)


def object_path(ref, query=""):
    """/api/v1/objects/{kind}[/{namespace}]/{name} (no namespace: cluster-scoped)."""
    kind = ref["kind"] + ("." + ref["group"] if ref.get("group") else "")
    parts = [kind] + ([ref["namespace"]] if ref.get("namespace") else []) + [ref["name"]]
    return "/api/v1/objects/%s%s" % ("/".join(urllib.parse.quote(p, safe="") for p in parts),
                                     query)


def ref_key(ref):
    return (ref.get("group", ""), ref["kind"], ref.get("namespace", ""), ref["name"])


def get_object(admin, ref):
    """The object as the controller shows it, or None when it has none."""
    status, body = admin.call("GET", object_path(ref))
    return body if status == 200 and isinstance(body, dict) else None


# ---------------------------------------------------------------------------------------------
# Check evaluation. Each evaluator returns (outcome, reason); outcome is PASS, FAIL, or SKIP
# (only what needs a gateway is wrong).


def conditions_match(conditions, want):
    """The condition list holds `want` ({type, status|None, reason|None}; None: any)."""
    for c in conditions or []:
        if c.get("type") != want["type"]:
            continue
        if want.get("status") is not None and c.get("status") != want["status"]:
            continue
        if want.get("reason") is None or c.get("reason") == want["reason"]:
            return True
    return False


def describe_condition(want):
    return "%s=%s(%s)" % (want["type"], want.get("status") or "any", want.get("reason") or "any")


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


def condition_lists(obj, kind):
    """The condition lists whose observedGeneration must follow metadata.generation: a route's
    status.parents[].conditions, a BackendTLSPolicy's status.ancestors[].conditions, else
    status.conditions."""
    status = obj.get("status") or {}
    if kind.endswith("Route"):
        return [p.get("conditions") for p in status.get("parents") or []]
    if kind == "BackendTLSPolicy":
        return [a.get("conditions") for a in status.get("ancestors") or []]
    return [status.get("conditions")]


def latest_generation(kind):
    """The generation check of a kind: every condition of its condition_lists is at
    metadata.generation (None), else why not."""
    return lambda obj: stale_generation(obj, condition_lists(obj, kind))


def name_of(ref):
    namespace = ref.get("namespace")
    return "%s %s" % (ref["kind"], "%s/%s" % (namespace, ref["name"]) if namespace else ref["name"])


def always(_check):
    return True


def never(_check):
    return False


def on_subject(key, waits=always):
    """Makes an evaluator from body(check, obj, out, context), which records failures in `out`
    (an Outcome): obj is the object check[key] names (FAIL when absent), and `out` starts with
    its generation check (latest_generation of its kind) when waits(check)."""
    def wrap(body):
        def evaluate_subject(check, admin, context):
            ref = check[key]
            obj = get_object(admin, ref)
            if obj is None:
                return FAIL, "%s not found" % name_of(ref)
            out = Outcome()
            stale = waits(check) and latest_generation(ref["kind"])(obj)
            if stale:
                out.fail(stale)
            body(check, obj, out, context)
            return out.result()
        return evaluate_subject
    return wrap


@on_subject("gateway")
def eval_gateway_ready(check, gw, out, _context):
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
            if (ref.get("group") != want.get("group", GATEWAY_API) or
                    ref.get("kind") != want.get("kind", "Gateway")):
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


# extended/README.md: the strict TLSRoute check does not wait for the generation.
@on_subject("route", waits=lambda check: not (check.get("strictParentRef") and
                                              check["route"]["kind"] == "TLSRoute"))
def eval_route_parent_condition(check, route, out, _context):
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


@on_subject("route")
def eval_route_no_accepted_parents(_check, route, out, _context):
    parents = (route.get("status") or {}).get("parents") or []
    if parents:
        accepted_false = {"type": "Accepted", "status": "False", "reason": None}
        if len(parents) != 1 or not conditions_match(parents[0].get("conditions"), accepted_false):
            out.fail("status.parents is neither empty nor one entry with Accepted=False: %s" %
                     json.dumps(parents))


def listeners_of(obj):
    return (obj.get("status") or {}).get("listeners") or []


def check_listener_conditions(out, listener, conditions):
    for c in conditions:
        if not conditions_match(listener.get("conditions"), c):
            out.fail("listener %s lacks %s (has %s)" % (
                listener.get("name"), describe_condition(c),
                [describe_condition(x) for x in listener.get("conditions") or []]),
                gateway_only=needs_gateway(c))


def check_listeners_status(check, obj, out, _context):
    """gatewayListenersStatus's rules on a Gateway's or ListenerSet's status.listeners."""
    listeners, wanted = listeners_of(obj), check["listeners"]
    if len(listeners) != len(wanted):
        out.fail("status.listeners has %d entries, want %d" % (len(listeners), len(wanted)))
    by_name = {l.get("name"): l for l in listeners}
    for want in wanted:
        have = by_name.get(want["name"])
        if have is None:
            out.fail("no status for listener %s" % want["name"])
            continue
        if "attachedRoutes" in want and have.get("attachedRoutes") != want["attachedRoutes"]:
            out.fail("listener %s: attachedRoutes %s, want %s" % (
                want["name"], have.get("attachedRoutes"), want["attachedRoutes"]))
        check_listener_conditions(out, have, want.get("conditions", []))
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


def check_named_listeners(check, obj, out, _context):
    """Each named listener (every one when none is named) is present and has the conditions."""
    by_name = {l.get("name"): l for l in listeners_of(obj)}
    for name in check["listeners"] or list(by_name):
        if name not in by_name:
            out.fail("no status for listener %s" % name)
        else:
            check_listener_conditions(out, by_name[name], check["conditions"])


@on_subject("gateway")
def eval_gateway_zero_attached_routes(_check, gw, out, _context):
    listeners = listeners_of(gw)
    if listeners and (len(listeners) != 1 or listeners[0].get("attachedRoutes") != 0):
        out.fail("status.listeners is neither empty nor one entry with attachedRoutes 0: %s" %
                 json.dumps([{"name": l.get("name"), "attachedRoutes": l.get("attachedRoutes")}
                             for l in listeners]))


# The checks of extended/README.md section 5 ("New checks").


@on_subject("gateway")
def eval_gateway_address(_check, gw, out, _context):
    if not any(a.get("type") for a in (gw.get("status") or {}).get("addresses") or []):
        out.fail("no status.addresses entry with a type", gateway_only=True)


def check_condition(check, obj, out, _context):
    """status.conditions hold check["condition"]."""
    conditions = (obj.get("status") or {}).get("conditions")
    want = check["condition"]
    if not conditions_match(conditions, want):
        out.fail("status.conditions lack %s (have %s)" % (
            describe_condition(want), [describe_condition(c) for c in conditions or []]),
            gateway_only=needs_gateway(want))


@on_subject("gateway")
def eval_gateway_attached_listener_sets(check, gw, out, _context):
    attached = (gw.get("status") or {}).get("attachedListenerSets", 0)
    if attached != check["count"]:
        out.fail("status.attachedListenerSets is %s, want %d" % (attached, check["count"]))


@on_subject("object")
def eval_latest_observed_generation(_check, _obj, _out, _context):
    pass  # on_subject's generation check is the whole check


def eval_generation_changed(check, admin, context):
    obj = get_object(admin, check["object"])
    if obj is None:
        return FAIL, "%s not found" % name_of(check["object"])
    before = context.generations.get(ref_key(check["object"]))
    now = (obj.get("metadata") or {}).get("generation")
    if now == before:
        return FAIL, "metadata.generation is still %s after the actions" % now
    return PASS, ""


def eval_namespaces_ready(check, admin, context):
    out = Outcome()
    ready = [{"type": "Accepted", "status": "True"}, {"type": "Programmed", "status": "True"}]
    for namespace in check["namespaces"]:
        for ref in context.gateways(namespace):
            gw = get_object(admin, ref)
            if gw is None:
                out.fail("%s not found" % name_of(ref))
                continue
            stale = latest_generation("Gateway")(gw)
            if stale:
                out.fail("%s: %s" % (name_of(ref), stale))
            conditions = (gw.get("status") or {}).get("conditions")
            for want in ready:
                if not conditions_match(conditions, want):
                    out.fail("%s lacks %s" % (name_of(ref), describe_condition(want)),
                             gateway_only=needs_gateway(want))
        for label, host, port in context.standins.get(namespace, []):
            try:
                socket.create_connection((host, port), timeout=1).close()
            except OSError as e:
                out.fail("stand-in %s (%s:%d) does not accept connections: %s" % (
                    label, host, port, e))
    return out.result()


@on_subject("policy")
def eval_policy_ancestor_condition(check, policy, out, _context):
    want, gateway = check["condition"], check["ancestorRef"]
    ancestors = (policy.get("status") or {}).get("ancestors") or []
    entries = [a for a in ancestors
               if (a.get("ancestorRef") or {}).get("name") == gateway["name"] and
               (a.get("ancestorRef") or {}).get("namespace", gateway.get("namespace")) ==
               gateway.get("namespace")]
    if not any(conditions_match(a.get("conditions"), want) for a in entries):
        out.fail("no status.ancestors entry for %s with %s (ancestors: %s)" % (
            name_of(gateway), describe_condition(want), json.dumps(ancestors)))


EVALUATORS = {
    "gatewayReady": eval_gateway_ready,
    "routeParentCondition": eval_route_parent_condition,
    "routeNoAcceptedParents": eval_route_no_accepted_parents,
    "gatewayListenersStatus": on_subject("gateway")(check_listeners_status),
    "gatewayZeroAttachedRoutes": eval_gateway_zero_attached_routes,
    "gatewayAddress": eval_gateway_address,
    "gatewayCondition": on_subject("gateway")(check_condition),
    "gatewayListenerConditions": on_subject("gateway", waits=never)(check_named_listeners),
    "gatewayAttachedListenerSets": eval_gateway_attached_listener_sets,
    "gatewayClassCondition": on_subject("gatewayClass")(check_condition),
    "listenerSetCondition": on_subject("listenerSet")(check_condition),
    "listenerSetListenerConditions": on_subject("listenerSet")(check_named_listeners),
    "listenerSetListenersStatus": on_subject("listenerSet")(check_listeners_status),
    "namespacesReady": eval_namespaces_ready,
    "latestObservedGeneration": eval_latest_observed_generation,
    "generationChanged": eval_generation_changed,
    "policyAncestorCondition": eval_policy_ancestor_condition,
}

# The key naming the object a check is about (describe_check), by check type.
CHECK_SUBJECTS = ("route", "gateway", "gatewayClass", "listenerSet", "policy", "object")


def describe_check(check):
    kind = check["check"]
    if kind == "routeParentCondition":
        text = "%s %s parent %s %s" % (kind, name_of(check["route"]), name_of(check["parentRef"]),
                                       describe_condition(check["condition"]))
        return text + (" strict" if check.get("strictParentRef") else "")
    if kind == "namespacesReady":
        return "%s %s" % (kind, ",".join(check["namespaces"]))
    subject = next(check[k] for k in CHECK_SUBJECTS if k in check)
    text = "%s %s" % (kind, name_of(subject))
    if "condition" in check and kind != "routeNoAcceptedParents":
        text += " " + describe_condition(check["condition"])
    if kind in ("gatewayListenerConditions", "listenerSetListenerConditions"):
        text += " listeners %s %s" % (",".join(check["listeners"]) or "*", " ".join(
            describe_condition(c) for c in check["conditions"]))
    if kind == "policyAncestorCondition":
        text += " ancestor " + name_of(check["ancestorRef"])
    return text


class CheckContext:
    """What checks need beyond the admin API (extended/README.md section 5): the Gateways of the
    base and the file by namespace, minus those annotated gateway-api/skip-this-for-readiness
    (namespacesReady), the stand-ins serving each namespace ({namespace: [(label, host, port)]},
    namespacesReady), the generations read before a phase's actions (generationChanged), and the
    generated objects and the file's manifests (perform: $valueFrom, waitBeforeS)."""

    def __init__(self, manifests=(), standins=None, generated=()):
        self.manifests = list(manifests)
        self.standins = standins or {}
        self.generated = list(generated)
        self.generations = {}

    def gateways(self, namespace):
        refs = []
        for m in self.manifests:
            meta = m.get("metadata") or {}
            skip = (meta.get("annotations") or {}).get("gateway-api/skip-this-for-readiness")
            if (m.get("kind") == "Gateway" and meta.get("namespace", "default") == namespace
                    and skip != "true"):
                refs.append({"group": GATEWAY_API, "kind": "Gateway", "namespace": namespace,
                             "name": meta["name"]})
        return refs

    def remember_generations(self, checks, admin):
        """Reads the generation of each object a generationChanged check names."""
        for check in checks:
            if check["check"] == "generationChanged":
                obj = get_object(admin, check["object"]) or {}
                self.generations[ref_key(check["object"])] = (
                    obj.get("metadata") or {}).get("generation")


def evaluate(check, admin, context=None):
    evaluator = EVALUATORS.get(check["check"])
    if evaluator is None:
        return FAIL, "unknown check type %s" % check["check"]
    try:
        return evaluator(check, admin, context or CheckContext())
    except (urllib.error.URLError, OSError, ValueError) as e:
        return FAIL, "admin API: %s" % e


def poll_checks(checks, admin, deadline, context=None):
    """Polls every 100 ms until no check fails (skips are final) or the deadline."""
    while True:
        results = [evaluate(c, admin, context) for c in checks]
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


def test_phases(test):
    """[(label, statusChecks, actions, cases)]: the file's own phase, then each followUp's."""
    phases = [("", test.get("statusChecks", []), [], test.get("cases", []))]
    for i, follow in enumerate(test.get("followUps", [])):
        phases.append(("followUp %d (%s): " % (i + 1, follow.get("name", "")),
                       follow.get("statusChecks", []), follow.get("actions", []),
                       follow.get("cases", [])))
    return phases


def run_phase(label, checks, actions, admin, deadline, seen, context, check_label=""):
    """A phase's actions, then its statusChecks polled until `deadline`: the
    [(description, outcome, reason)] of each failing action and of every check."""
    results = []
    context.remember_generations(checks, admin)
    for action in actions:
        error = perform(action, admin, context)
        if error:
            results.append((label + "action", FAIL, error))
    outcomes = poll_checks(checks, admin, deadline, context)
    for description, (outcome, why) in zip(
            unique_descriptions(label + check_label, checks, seen), outcomes):
        results.append((description, outcome, why))
    return results


# ---------------------------------------------------------------------------------------------
# Manifests, secrets and the config directory


def openssl(*args, cwd):
    return subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                          capture_output=True).stdout


def generate_secret_pems(workdir, hosts):
    """A self-signed RSA 2048 pair as upstream's suite makes it (see _base.json)."""
    sans = []
    for host in hosts:
        if host.replace("*.", "", 1).replace(".", "").replace("-", "").isalnum() and host != "*":
            sans.append("DNS:" + host)
        else:
            sans.append("URI:" + host)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out",
            "cert.pem", "-days", "365", "-subj", "/CN=default/O=Acme Co",
            "-addext", "subjectAltName=" + ",".join(sans),
            "-addext", "keyUsage=keyEncipherment,digitalSignature",
            "-addext", "extendedKeyUsage=serverAuth", cwd=workdir)
    with open(os.path.join(workdir, "cert.pem"), "rb") as f:
        return f.read(), openssl("rsa", "-in", "key.pem", "-traditional", cwd=workdir)


CA_CONFIG = ("[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nC=US\nO=Kubernetes Gateway API\n"
             "CN=gatewayapi\n[v3_ca]\nbasicConstraints=critical,CA:TRUE\n"
             "keyUsage=critical,digitalSignature,keyCertSign\n"
             "extendedKeyUsage=clientAuth,serverAuth\nsubjectKeyIdentifier=hash\n")


def generate_ca(workdir):
    """A CA as extended/_base.json generatedSecretsDetails says (ca.key stays in workdir)."""
    with open(os.path.join(workdir, "ca.cnf"), "w") as f:
        f.write(CA_CONFIG)
    openssl("req", "-x509", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.crt", "-days", "365", "-set_serial", "2024", "-config", "ca.cnf", "-extensions",
            "v3_ca", cwd=workdir)
    with open(os.path.join(workdir, "ca.crt"), "rb") as f:
        return f.read()


def generate_signed_pems(workdir, ca_dir, secret):
    """A leaf signed by the CA in ca_dir, with the secret's extKeyUsage and effectiveSANs."""
    sans = secret.get("effectiveSANs") or {}
    names = (["DNS:" + n for n in sans.get("dns", [])] + ["URI:" + n for n in sans.get("uri", [])]
             + ["IP:" + n for n in sans.get("ip", [])])
    ext = ["basicConstraints=critical,CA:FALSE",
           "keyUsage=critical,digitalSignature,keyEncipherment",
           "extendedKeyUsage=" + ",".join(secret.get("extKeyUsage") or ["serverAuth"])]
    if names:
        ext.append("subjectAltName=" + ",".join(names))
    with open(os.path.join(workdir, "leaf.ext"), "w") as f:
        f.write("\n".join(ext) + "\n")
    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "tls.key", "-out",
            "tls.csr", "-subj", "/O=Acme Co/CN=default", cwd=workdir)
    openssl("x509", "-req", "-in", "tls.csr", "-CA", os.path.join(ca_dir, "ca.crt"), "-CAkey",
            os.path.join(ca_dir, "ca.key"), "-set_serial", "0x" + os.urandom(16).hex(),
            "-days", "365", "-extfile", "leaf.ext", "-out", "tls.crt", cwd=workdir)
    with open(os.path.join(workdir, "tls.crt"), "rb") as f:
        return f.read(), openssl("rsa", "-in", "tls.key", "-traditional", cwd=workdir)


def tls_secret(spec, cert, key):
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": spec["name"], "namespace": spec["namespace"]},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": base64.b64encode(cert).decode(),
                     "tls.key": base64.b64encode(key).decode()}}


def generated_secrets(base, workdir):
    """The base's generated objects, made with openssl in workdir: its self-signed
    generatedSecrets as kubernetes.io/tls Secrets, then each generatedConfigMaps CA (a ConfigMap
    holding ca.crt) and the generatedSecrets it signs ("signedBy"), in that order."""
    objects, cas = [], {}
    specs = base.get("generatedSecrets", [])
    for i, s in enumerate(specs):
        if not s.get("signedBy"):
            d = os.path.join(workdir, "secret-%d" % i)
            os.makedirs(d)
            objects.append(tls_secret(s, *generate_secret_pems(d, s.get("hosts", ["*"]))))
    for i, cm in enumerate(base.get("generatedConfigMaps", [])):
        d = os.path.join(workdir, "ca-%d" % i)
        os.makedirs(d)
        key = "%s/%s" % (cm["namespace"], cm["name"])
        cas[key] = d
        objects.append({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": cm["name"], "namespace": cm["namespace"]},
                        "data": {cm.get("key", "ca.crt"): generate_ca(d).decode()}})
    for i, s in enumerate(specs):
        if s.get("signedBy"):
            d = os.path.join(workdir, "secret-%d" % i)
            os.makedirs(d)
            objects.append(tls_secret(s, *generate_signed_pems(d, cas[s["signedBy"]], s)))
    return objects


PLACEHOLDERS = {"{GATEWAY_CLASS_NAME}": GATEWAY_CLASS, "{GATEWAY_CONTROLLER_NAME}": CONTROLLER_NAME}


def substitute(value):
    if isinstance(value, str):
        for placeholder, replacement in PLACEHOLDERS.items():
            value = value.replace(placeholder, replacement)
        return value
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


def make_ref(api_version, kind, namespace, name):
    return {"group": api_version.rsplit("/", 1)[0] if "/" in api_version else "", "kind": kind,
            "namespace": namespace or "", "name": name}


def action_ref(action):
    return make_ref(action.get("apiVersion", ""), action["kind"], action.get("namespace"),
                    action["name"])


def object_ref(obj):
    meta = obj.get("metadata") or {}
    return make_ref(obj.get("apiVersion", ""), obj.get("kind", ""), meta.get("namespace"),
                    meta.get("name", ""))


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: objects merge key by key, null removes, anything else
    (lists included) replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# What the controller (like an API server) adds to an object it shows; not written back by a
# patch ("portico": the controller's own view of the object: source file, hashes, errors).
SERVER_FIELDS = ("status", "portico")
SERVER_METADATA = ("generation", "creationTimestamp", "resourceVersion", "uid", "managedFields")


def resolve_value_from(value, generated):
    """Replaces each {"$valueFrom": {"configMap": "ns/name", "key": k}} by that generated
    ConfigMap's data value (extended/README.md section 6); KeyError when there is none."""
    if isinstance(value, list):
        return [resolve_value_from(v, generated) for v in value]
    if not isinstance(value, dict):
        return value
    source = value.get("$valueFrom")
    if source is None:
        return {k: resolve_value_from(v, generated) for k, v in value.items()}
    for obj in generated:
        meta = obj.get("metadata") or {}
        if (obj.get("kind") == "ConfigMap" and
                "%s/%s" % (meta.get("namespace"), meta.get("name")) == source["configMap"]):
            return obj["data"][source["key"]]
    raise KeyError("no generated ConfigMap %s" % source["configMap"])


def apply_object(admin, obj):
    status, body = admin.call("POST", "/api/v1/apply?wait=true", json.dumps(obj), timeout=40,
                              content_type="application/json")
    if status != 200:
        return "apply %s: HTTP %d %s" % (name_of(object_ref(obj)), status, body)
    return None


def creation_time(obj):
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    try:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return None


def wait_newer_than_manifests(admin, context, seconds, timeout=30):
    """Waits until the wall clock is `seconds` past the newest creationTimestamp the controller
    shows for the file's manifests (what an action's waitBeforeS is for: a created object is
    then strictly newer, at the timestamps' 1 s precision); at most `timeout` seconds."""
    stamps = [creation_time(get_object(admin, object_ref(m)) or {}) for m in context.manifests]
    newest = max([t for t in stamps if t is not None] or [time.time()])
    deadline = time.monotonic() + timeout
    while time.time() < newest + seconds and time.monotonic() < deadline:
        time.sleep(0.1)


def perform(action, admin, context=None):
    """A followUp action through the admin API (delete, patch: an RFC 7386 merge patch of the
    object as the controller holds it, create); None, or what went wrong."""
    op = action.get("op")
    generated = context.generated if context is not None else []
    try:
        if op == "delete":
            ref = action_ref(action)
            status, body = admin.call("DELETE", object_path(ref, "?wait=true"), timeout=40)
            return None if status == 200 else "delete %s: HTTP %d %s" % (name_of(ref), status,
                                                                          body)
        if op == "patch":
            ref = action_ref(action)
            current = get_object(admin, ref)
            if current is None:
                return "patch %s: not found" % name_of(ref)
            current = {k: v for k, v in current.items() if k not in SERVER_FIELDS}
            current["metadata"] = {k: v for k, v in (current.get("metadata") or {}).items()
                                   if k not in SERVER_METADATA}
            patch = resolve_value_from(substitute(action["mergePatch"]), generated)
            return apply_object(admin, merge_patch(current, patch))
        if op == "create":
            if action.get("waitBeforeS") and context is not None:
                wait_newer_than_manifests(admin, context, action["waitBeforeS"])
            return apply_object(admin, resolve_value_from(substitute(action["object"]),
                                                          generated))
    except (KeyError, urllib.error.URLError, OSError, ValueError) as e:
        return "%s: %s" % (op, e)
    return "unsupported action %s" % op


def load_expected(path):
    """The entries of an expected-failures file: its lines without blanks and '#' comments (a
    line starting with '#', or from a '#' that follows whitespace and precedes whitespace or
    the end: "file.json: case: name #2" keeps its " #2")."""
    expected = set()
    with open(path) as f:
        for line in f:
            line = re.sub(r"(^|\s)#(\s.*)?$", "", line.strip()).strip()
            if line:
                expected.add(line)
    return expected
