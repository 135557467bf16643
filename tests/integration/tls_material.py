"""Certificates for the integration tests, made at test time by the openssl command (no key in
the repository), and the kubernetes.io/tls Secret that carries them."""

import os
import ssl
import subprocess

SUBPROCESS_TIMEOUT = 20


def openssl(*args, cwd=None, env=None, stdin=subprocess.DEVNULL):
    return subprocess.run(["openssl"] + list(args), cwd=cwd, env=env, stdin=stdin,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)


class Pair:
    """A certificate (PEM) and its key (PEM), made by the openssl command."""

    def __init__(self, cert, key):
        self.cert, self.key = cert, key

    def der(self):
        return ssl.PEM_cert_to_DER_cert(self.cert)


def make_pair(directory, name, sans, days=30):
    """A self-signed ECDSA P-256 certificate for DNS names `sans`; days < 0: already expired
    (notAfter `days` days from now, before notBefore)."""
    d = os.path.join(directory, name)
    os.makedirs(d)
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n" %
                ",".join("DNS:" + n for n in sans))
    for argv in (["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                  "-nodes", "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=" + sans[0]],
                 ["x509", "-req", "-in", "tls.csr", "-signkey", "tls.key", "-days", str(days),
                  "-extfile", "ext", "-out", "tls.crt"]):
        done = openssl(*argv, cwd=d)
        if done.returncode != 0:
            raise AssertionError("openssl %s: %s" % (" ".join(argv), done.stderr))
    with open(os.path.join(d, "tls.crt")) as c, open(os.path.join(d, "tls.key")) as k:
        return Pair(c.read(), k.read())


def secret_yaml(name, pair, ns="default"):
    """A kubernetes.io/tls Secret (stringData: the controller merges it as the API server
    does)."""
    def block(text):
        return "".join("    " + line + "\n" for line in text.strip().splitlines())
    return ("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\n"
            "type: kubernetes.io/tls\nstringData:\n  tls.crt: |\n%s  tls.key: |\n%s"
            % (name, ns, block(pair.cert), block(pair.key)))


def sign_expired(ca_dir, out_dir, name, role):
    """An already expired certificate (and its key) signed by the CA of `portico-ctl gen-certs`
    in ca_dir (ca.crt, ca.key), for role "server" (localhost, 127.0.0.1) or "client"; written to
    out_dir/name.crt and name.key. Returns (cert path, key path)."""
    os.makedirs(out_dir, exist_ok=True)
    ext = os.path.join(out_dir, name + ".ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n")
        if role == "server":
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        else:
            f.write("extendedKeyUsage=clientAuth\n")
    cert, key, csr = (os.path.join(out_dir, name + s) for s in (".crt", ".key", ".csr"))
    for argv in (["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                  "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + name],
                 ["x509", "-req", "-in", csr, "-CA", os.path.join(ca_dir, "ca.crt"), "-CAkey",
                  os.path.join(ca_dir, "ca.key"), "-CAcreateserial", "-days", "-1", "-extfile",
                  ext, "-out", cert]):
        done = openssl(*argv, cwd=out_dir)
        if done.returncode != 0:
            raise AssertionError("openssl %s: %s" % (" ".join(argv), done.stderr))
    return cert, key
