"""bench_manifests.py: the Gateway API YAML the benchmarks load (tests/bench/sync.py,
tests/bench/proxy/bench.py): a GatewayClass "portico" with Gateway default/web on one HTTP
listener, a Service (optionally with an EndpointSlice on 127.0.0.1) and one-rule HTTPRoutes on
that Gateway."""


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


def route_yaml(name, hostname, match, service):
    """HTTPRoute default/NAME on Gateway web: one rule, `match` (a YAML flow mapping), to
    SERVICE:80."""
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            "metadata: {name: %s, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n"
            "  hostnames: [%s]\n  rules:\n  - matches: [%s]\n"
            "    backendRefs: [{name: %s, port: 80}]\n" % (name, hostname, match, service))
