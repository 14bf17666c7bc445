"""ES256 (ECDSA over P-256 with SHA-256) JWTs, with the standard library only.

Used for ``private_key_jwt`` client authentication (RFC 7523): the client signs a short-lived
assertion with its key. The project's dependencies include no cryptography package, and one
signature per token request is cheap enough in pure Python (a few milliseconds). Signing uses
a fresh random nonce from ``secrets`` for every signature. Keys come as PKCS#8 (``BEGIN PRIVATE
KEY``) or SEC 1 (``BEGIN EC PRIVATE KEY``) PEM.
"""
from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import uuid
from typing import Any, Dict, Optional, Tuple

__all__ = ["DPoPKey", "client_assertion", "es256_jwt", "load_ec_private_key"]

# P-256 (secp256r1) domain parameters
_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_A = _P - 3
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
      0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
_P256_OID = bytes.fromhex("2a8648ce3d030107")  # 1.2.840.10045.3.1.7


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# --- elliptic curve arithmetic (Jacobian coordinates) ------------------------------------------------

def _double(p: Tuple[int, int, int]) -> Tuple[int, int, int]:
    x, y, z = p
    if y == 0:
        return (0, 0, 0)
    ysq = y * y % _P
    s = 4 * x * ysq % _P
    m = (3 * x * x + _A * pow(z, 4, _P)) % _P
    nx = (m * m - 2 * s) % _P
    return nx, (m * (s - nx) - 8 * ysq * ysq) % _P, 2 * y * z % _P


def _add(p: Tuple[int, int, int], q: Tuple[int, int, int]) -> Tuple[int, int, int]:
    if p[2] == 0:
        return q
    if q[2] == 0:
        return p
    z1z1, z2z2 = p[2] * p[2] % _P, q[2] * q[2] % _P
    u1, u2 = p[0] * z2z2 % _P, q[0] * z1z1 % _P
    s1, s2 = p[1] * z2z2 * q[2] % _P, q[1] * z1z1 * p[2] % _P
    if u1 == u2:
        return _double(p) if s1 == s2 else (0, 0, 0)
    h, r = (u2 - u1) % _P, (s2 - s1) % _P
    hh = h * h % _P
    hhh = h * hh % _P
    v = u1 * hh % _P
    nx = (r * r - hhh - 2 * v) % _P
    return nx, (r * (v - nx) - s1 * hhh) % _P, h * p[2] * q[2] % _P


def _multiply(k: int, point: Tuple[int, int]) -> Tuple[int, int]:
    result: Tuple[int, int, int] = (0, 0, 0)
    addend: Tuple[int, int, int] = (point[0], point[1], 1)
    while k:
        if k & 1:
            result = _add(result, addend)
        addend = _double(addend)
        k >>= 1
    x, y, z = result
    zinv = pow(z, -1, _P)
    return x * zinv * zinv % _P, y * zinv * zinv * zinv % _P


def _sign(d: int, digest: bytes) -> bytes:
    e = int.from_bytes(digest, "big")
    while True:
        k = secrets.randbelow(_N - 1) + 1
        r = _multiply(k, _G)[0] % _N
        if r == 0:
            continue
        s = pow(k, -1, _N) * (e + r * d) % _N
        if s:
            return r.to_bytes(32, "big") + s.to_bytes(32, "big")


# --- keys ----------------------------------------------------------------------------------------

def _der(data: bytes, pos: int) -> Tuple[int, bytes, int]:
    """(tag, content, next position) of the DER element at ``pos``."""
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    return tag, data[pos:pos + length], pos + length


def load_ec_private_key(pem: str) -> int:
    """The private scalar of a P-256 key in PKCS#8 or SEC 1 PEM (``ValueError`` for anything else)."""
    body = "".join(line for line in pem.strip().splitlines() if line and not line.startswith("-----"))
    der = base64.b64decode(body)
    tag, seq, _ = _der(der, 0)
    if tag != 0x30:
        raise ValueError("not a DER sequence")
    _, version, pos = _der(seq, 0)
    tag, second, pos = _der(seq, pos)
    if tag == 0x04:  # SEC 1 ECPrivateKey: version 1, the key, [0] curve
        key = second
    else:  # PKCS#8: version, AlgorithmIdentifier, OCTET STRING(ECPrivateKey)
        if _P256_OID not in second:
            raise ValueError("not a P-256 key")
        _, inner, _ = _der(seq, pos)
        _, ec, _ = _der(inner, 0)
        _, _, p2 = _der(ec, 0)
        _, key, _ = _der(ec, p2)
    d = int.from_bytes(key, "big")
    if not 0 < d < _N:
        raise ValueError("not a valid P-256 private key")
    return d


def es256_jwt(claims: Dict[str, Any], key: int, header: Optional[Dict[str, Any]] = None) -> str:
    """A compact JWS over ``claims`` signed with ES256."""
    head = {"alg": "ES256", "typ": "JWT", **(header or {})}
    signing_input = (_b64url(json.dumps(head, separators=(",", ":")).encode()) + "."
                     + _b64url(json.dumps(claims, separators=(",", ":")).encode()))
    signature = _sign(key, hashlib.sha256(signing_input.encode("ascii")).digest())
    return signing_input + "." + _b64url(signature)


def client_assertion(client_id: str, audience: str, key: int, lifetime: int = 60) -> str:
    """RFC 7523 client authentication assertion: iss = sub = client_id, aud = the AS issuer."""
    now = int(time.time())
    return es256_jwt({"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + lifetime,
                      "jti": uuid.uuid4().hex}, key)


class DPoPKey:
    """A fresh P-256 key pair for DPoP (RFC 9449): ``proof()`` signs one request's proof."""

    def __init__(self) -> None:
        self._d = secrets.randbelow(_N - 1) + 1
        x, y = _multiply(self._d, _G)
        self.jwk = {"kty": "EC", "crv": "P-256", "x": _b64url(x.to_bytes(32, "big")), "y": _b64url(y.to_bytes(32, "big"))}

    def proof(self, method: str, url: str, access_token: Optional[str] = None, nonce: Optional[str] = None) -> str:
        """A DPoP proof for one request: a new ``jti`` every time; ``ath`` binds the token."""
        claims: Dict[str, Any] = {"jti": uuid.uuid4().hex, "htm": method, "htu": url.split("?")[0].split("#")[0],
                                  "iat": int(time.time())}
        if access_token is not None:
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        return es256_jwt(claims, self._d, {"typ": "dpop+jwt", "jwk": self.jwk})
