"""Signatures from ``cryptography`` (the oauth extra): DPoP proofs and ``private_key_jwt``
assertions verify with an independent verifier, no elliptic-curve arithmetic of our own remains,
and without the extra (or redis for ``RedisTokenStore``) the error names what to install, while
``import mcpclient`` and a plain OAuth client load no cryptography.
"""
from __future__ import annotations

import base64
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from conftest import LONG
from mcpclient.auth import ClientCredentials, OAuth


#: The signing tests verify with ``cryptography`` itself (the oauth and test extras have it).
needs_cryptography = pytest.mark.skipif(importlib.util.find_spec("cryptography") is None,
                                        reason="cryptography comes with the oauth and test extras")


REPO = Path(__file__).resolve().parents[2]


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def _b64d(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _verify_es256(jws: str, x: int, y: int) -> None:
    """Verify with cryptography's verifier, independently of mcpclient's signing code."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    head, payload, sig = jws.split(".")
    raw = _b64d(sig)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    public.verify(der, f"{head}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if invalid


@needs_cryptography
def test_dpop_proofs_verify_with_an_independent_verifier(tmp_path):
    """A DPoP proof from the cryptography-based signer verifies against its
    own JWK, with cryptography and with the openssl command line."""
    import hashlib

    from mcpclient.auth.jwt import DPoPKey

    key = DPoPKey()
    proof = key.proof("POST", "https://as.example/token?x=1", "tok", "nonce-1")
    head, payload, sig = proof.split(".")
    header, claims = json.loads(_b64d(head)), json.loads(_b64d(payload))
    assert header["alg"] == "ES256" and header["typ"] == "dpop+jwt" and header["jwk"] == key.jwk
    assert claims["htu"] == "https://as.example/token" and claims["nonce"] == "nonce-1"
    assert claims["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    x, y = (int.from_bytes(_b64d(key.jwk[c]), "big") for c in ("x", "y"))
    _verify_es256(proof, x, y)
    with pytest.raises(Exception):  # a changed claim no longer verifies
        _verify_es256(head + "." + payload[:-2] + ("AA" if payload[-2:] != "AA" else "BB") + "." + sig, x, y)
    import shutil

    if shutil.which("openssl"):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

        pub = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        (tmp_path / "pub.pem").write_bytes(pub.public_bytes(serialization.Encoding.PEM,
                                                           serialization.PublicFormat.SubjectPublicKeyInfo))
        raw = _b64d(sig)
        (tmp_path / "sig.der").write_bytes(encode_dss_signature(int.from_bytes(raw[:32], "big"),
                                                                int.from_bytes(raw[32:], "big")))
        (tmp_path / "data").write_bytes(f"{head}.{payload}".encode())
        done = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(tmp_path / "pub.pem"), "-signature",
                               str(tmp_path / "sig.der"), str(tmp_path / "data")], capture_output=True, text=True,
                              timeout=LONG)
        assert done.returncode == 0 and "Verified OK" in done.stdout, done.stdout + done.stderr


@needs_cryptography
@pytest.mark.parametrize("form", ["pkcs8", "sec1"])
def test_private_key_jwt_assertions_verify(form):
    """A private_key_jwt assertion signed with a PEM key (PKCS#8 or SEC 1)
    verifies with the key's public half; other keys are refused."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from mcpclient.auth.jwt import client_assertion, load_ec_private_key

    private = ec.generate_private_key(ec.SECP256R1())
    fmt = serialization.PrivateFormat.PKCS8 if form == "pkcs8" else serialization.PrivateFormat.TraditionalOpenSSL
    pem = private.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    jws = client_assertion("client-1", "https://as.example", load_ec_private_key(pem))
    numbers = private.public_key().public_numbers()
    _verify_es256(jws, numbers.x, numbers.y)
    claims = json.loads(_b64d(jws.split(".")[1]))
    assert claims["iss"] == claims["sub"] == "client-1" and claims["aud"] == "https://as.example"
    other = ec.generate_private_key(ec.SECP384R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    for bad in (other, "not a key", pem.replace("PRIVATE KEY", "PUBLIC KEY")):
        with pytest.raises(ValueError):
            ClientCredentials("c", private_key=bad)
    OAuth(ClientCredentials("c", private_key=pem))


def test_no_elliptic_curve_arithmetic_remains_in_the_package():
    """The hand-made P-256 arithmetic and ASN.1 parser are gone."""
    p256_prime = "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"
    paths = sorted((REPO / "mcpclient").rglob("*.py"))
    assert REPO / "mcpclient" / "auth" / "jwt.py" in paths  # the walk reaches the package
    for path in paths:
        text = path.read_text(encoding="utf-8").lower().replace("_", "")
        assert p256_prime not in text.replace("0x", ""), path
        assert "def multiply(" not in text and "def der(" not in text, path


CHECK_EXTRA = r"""
import sys
sys.modules["cryptography"] = None  # as if the oauth extra were not installed
import mcpclient
from mcpclient import AuthError, MCPError, MissingExtraError
from mcpclient.auth import ClientCredentials, OAuth
plain = OAuth(ClientCredentials("c", client_secret="s"))  # needs no extra
assert "mcpclient.auth.jwt" not in sys.modules
try:
    ClientCredentials("c", private_key=sys.argv[1])
except MissingExtraError as exc:
    assert isinstance(exc, ImportError) and isinstance(exc, MCPError) and not isinstance(exc, AuthError) and exc.extra == "oauth"
    print(exc)
try:
    from mcpclient.auth.jwt import DPoPKey
except ImportError as exc:
    print(exc)
"""


def test_without_the_oauth_extra_the_error_names_it():
    """Without ``cryptography`` a plain OAuth client works; DPoP and
    private_key_jwt raise ``MissingExtraError`` (an MCPError and an ImportError) naming the extra."""
    pem = "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n"
    done = subprocess.run([sys.executable, "-c", CHECK_EXTRA, pem], capture_output=True, text=True, env=_env(),
                          timeout=LONG * 3)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2 and all("pip install 'mcpclient[oauth]'" in line for line in lines), done.stdout


def test_importing_mcpclient_or_a_plain_oauth_client_loads_no_cryptography():
    code = ("import sys, mcpclient; assert 'cryptography' not in sys.modules; "
            "from mcpclient.auth import ClientCredentials, OAuth, FileTokenStore; "
            "OAuth(ClientCredentials('c', client_secret='s'), dpop=False); "
            "assert not any(m.startswith(('cryptography', 'redis')) for m in sys.modules), sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=LONG * 3)
    assert done.returncode == 0, done.stderr


def test_the_redis_store_without_the_extra_names_it():
    code = ("import sys; sys.modules['redis'] = None\n"
            "from mcpclient.auth import RedisTokenStore\n"
            "from mcpclient import MissingExtraError\n"
            "try:\n    RedisTokenStore('redis://127.0.0.1:1/0')\n"
            "except MissingExtraError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=LONG * 3)
    assert done.returncode == 0 and "pip install 'mcpclient[redis]'" in done.stdout, done.stdout + done.stderr
