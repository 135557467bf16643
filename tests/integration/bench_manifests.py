"""bench_manifests.py: the Gateway API YAML the benchmarks load (tests/bench/sync.py,
tests/bench/proxy/bench.py): a GatewayClass "portico" with Gateway default/web on one HTTP
listener (or one HTTPS listener with a kubernetes.io/tls Secret), a Service (optionally with an
EndpointSlice on 127.0.0.1) and one-rule HTTPRoutes on that Gateway (optionally with filters),
and a portico.io Webhook."""

import base64


def gateway_yaml(port):
    """GatewayClass portico and Gateway default/web with listener "http" on `port`."""
    return """apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portico}
spec: {controllerName: portico.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: portico
  listeners:
  - {name: http, protocol: HTTP, port: %d}
""" % port


def https_gateway_yaml(port, secret):
    """GatewayClass portico and Gateway default/web with listener "https" on `port`: HTTPS,
    no hostname, TLS Terminate with Secret default/SECRET (tls_secret_yaml)."""
    return """apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portico}
spec: {controllerName: portico.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: portico
  listeners:
  - name: https
    protocol: HTTPS
    port: %d
    tls: {mode: Terminate, certificateRefs: [{kind: Secret, name: %s}]}
""" % (port, secret)


def tls_secret_yaml(name, cert_pem, key_pem):
    """Secret default/NAME of type kubernetes.io/tls holding the PEM bytes cert_pem, key_pem."""
    return ("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\n"
            "type: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n" % (
                name, base64.b64encode(cert_pem).decode(), base64.b64encode(key_pem).decode()))


def service_yaml(name, target_port, endpoints=False):
    """Service default/NAME port 80 -> target_port; with `endpoints`, its EndpointSlice on
    127.0.0.1 (ready)."""
    text = """apiVersion: v1
kind: Service
metadata: {name: %s, namespace: default}
spec:
  ports: [{name: http, port: 80, targetPort: %d}]
""" % (name, target_port)
    if endpoints:
        text += """---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s, namespace: default, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
ports: [{name: http, port: %d}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
""" % (name, name, target_port)
    return text


def route_yaml(name, hostname, match, service, filters=None):
    """HTTPRoute default/NAME on Gateway web: one rule, `match` (a YAML flow mapping), to
    SERVICE:80; `filters`: the rule's filters (a list of YAML flow mappings), none when None."""
    rule_filters = "    filters: [%s]\n" % ", ".join(filters) if filters else ""
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  hostnames: [%s]\n  rules:\n  - matches: [%s]\n%s"
            "    backendRefs: [{name: %s, port: 80}]\n" % (name, hostname, match, rule_filters,
                                                          service))


def webhook_yaml(name, url, path="/auth", timeout="1s", failure_policy="Fail"):
    """Webhook default/NAME (portico.io/v1alpha1) calling URL (an IP address URL) at PATH."""
    return ("apiVersion: portico.io/v1alpha1\nkind: Webhook\n"
            "metadata: {name: %s, namespace: default}\n"
            "spec: {url: \"%s\", path: \"%s\", timeout: \"%s\", failurePolicy: %s}\n" % (
                name, url, path, timeout, failure_policy))


def webhook_filter(name):
    """The HTTPRoute rule filter (a YAML flow mapping) that binds Webhook NAME."""
    return ("{type: ExtensionRef, extensionRef: {group: portico.io, kind: Webhook, name: %s}}"
            % name)
