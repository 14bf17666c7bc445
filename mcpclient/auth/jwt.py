"""ES256 (ECDSA over P-256 with SHA-256) JWTs, signed by the ``cryptography`` package.

Used for ``private_key_jwt`` client authentication (RFC 7523: the client signs a short-lived
assertion with its key) and for DPoP proofs (RFC 9449). The signing itself is OpenSSL's, through
``cryptography``: audited and constant-time, where a hand-made curve implementation is neither.
``cryptography`` is an optional extra (``pip install 'mcpclient[oauth]'``), imported only when
this module is: a client that uses neither feature never loads it. Without it this module
raises ``MissingExtraError`` (an ``MCPError`` and an ``ImportError``) naming the extra.

Keys come as PKCS#8 (``BEGIN PRIVATE KEY``) or SEC 1 (``BEGIN EC PRIVATE KEY``) PEM, unencrypted,
on the P-256 curve.
"""
from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from typing import Any, Dict, Optional, Union

from ..errors import MissingExtraError

try:
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
except ImportError as exc:  # the extra is not installed
    raise MissingExtraError(
        "DPoP and private_key_jwt need the 'cryptography' package: pip install 'mcpclient[oauth]'",
        extra="oauth", name="cryptography") from exc

__all__ = ["DPoPKey", "client_assertion", "es256_jwt", "load_ec_private_key"]

#: A P-256 private key: what ``load_ec_private_key`` returns (a raw scalar is accepted too).
SigningKey = Union["ec.EllipticCurvePrivateKey", int]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def load_ec_private_key(pem: str) -> "ec.EllipticCurvePrivateKey":
    """The P-256 private key in a PKCS#8 or SEC 1 PEM (``ValueError`` for anything else:
    another curve or key type, an encrypted key, or not a key at all)."""
    try:
        key = serialization.load_pem_private_key(pem.encode("ascii") if isinstance(pem, str) else pem,
                                                 password=None)
    except TypeError:  # encrypted: it needs a password we do not have
        raise ValueError("the key is encrypted; give an unencrypted PEM") from None
    except (UnicodeEncodeError, UnsupportedAlgorithm) as exc:
        raise ValueError(f"not a usable PEM key ({type(exc).__name__})") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("not a P-256 key")
    return key


def _key(key: SigningKey) -> "ec.EllipticCurvePrivateKey":
    if isinstance(key, int):  # the scalar itself (what this module's earlier versions passed around)
        return ec.derive_private_key(key, ec.SECP256R1())
    return key


def es256_jwt(claims: Dict[str, Any], key: SigningKey, header: Optional[Dict[str, Any]] = None) -> str:
    """A compact JWS over ``claims`` signed with ES256 (the signature is JOSE's raw r || s)."""
    head = {"alg": "ES256", "typ": "JWT", **(header or {})}
    signing_input = (_b64url(json.dumps(head, separators=(",", ":")).encode()) + "."
                     + _b64url(json.dumps(claims, separators=(",", ":")).encode()))
    der = _key(key).sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def client_assertion(client_id: str, audience: str, key: SigningKey, lifetime: int = 60) -> str:
    """RFC 7523 client authentication assertion: iss = sub = client_id, aud = the AS issuer."""
    now = int(time.time())
    return es256_jwt({"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + lifetime,
                      "jti": uuid.uuid4().hex}, key)


class DPoPKey:
    """A fresh P-256 key pair for DPoP (RFC 9449): ``proof()`` signs one request's proof."""

    def __init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        numbers = self._key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": _b64url(numbers.x.to_bytes(32, "big")),
                    "y": _b64url(numbers.y.to_bytes(32, "big"))}

    def __repr__(self) -> str:  # never the key
        return f"<DPoPKey P-256 x={self.jwk['x'][:8]}…>"

    def proof(self, method: str, url: str, access_token: Optional[str] = None, nonce: Optional[str] = None) -> str:
        """A DPoP proof for one request: a new ``jti`` every time; ``ath`` binds the token."""
        claims: Dict[str, Any] = {"jti": uuid.uuid4().hex, "htm": method, "htu": url.split("?")[0].split("#")[0],
                                  "iat": int(time.time())}
        if access_token is not None:
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        return es256_jwt(claims, self._key, {"typ": "dpop+jwt", "jwk": self.jwk})
