"""The grants, as values: how ``OAuth(grant)`` gets a token for an MCP server.

Each grant is a frozen value holding the settings of one way to get a token (RFC 6749 and its
extensions), checked when it is made: a missing setting, a wrong type or a combination that
cannot work (a client secret and a private key both) is a ``TypeError`` or ``ValueError`` at
construction, never an ``AuthError`` at the first 401. What every grant shares (the token store,
scopes, timeouts, DPoP, the address guard) is ``OAuth``'s. Secrets (client secrets, private keys,
assertions, ID tokens) are left out of every ``repr``.

A ``private_key`` is an EC P-256 key in PEM for ``private_key_jwt`` client authentication (RFC
7523); reading it needs ``pip install 'mcpclient[oauth]'`` (``cryptography``), without which
making the grant raises ``MissingExtraError``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Tuple, Union
from urllib.parse import urlsplit

from .._util.lazy import load

if TYPE_CHECKING:  # cryptography is an optional extra: the annotation only
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

__all__ = ["Authorize", "AuthorizationCode", "ClientCredentials", "EnterpriseExchange", "Grant", "JWTBearer",
           "JWTSource"]

#: ``authorize(authorization_url) -> callback_url``: send the user to the URL and return the URL
#: the authorization server redirected back to (with ``code``, ``state``, ``iss``).
Authorize = Callable[[str], str]

#: A JWT, or a callable returning the current one (platform tokens are short-lived: called for
#: every grant run).
JWTSource = Union[str, Callable[[], str]]

_REDIRECT_URI = "http://127.0.0.1:33418/callback"


@dataclass(frozen=True)
class AuthorizationCode:
    """A user logs in: the authorization code grant with PKCE (S256).

    Example::

        OAuth(AuthorizationCode(loopback_authorize(),
                                client_metadata_url="https://app.example/client.json"))

    The client's identity at the authorization server is, in this order: ``client_id`` (a
    pre-registered client, public or with ``client_secret`` or ``private_key``), else
    ``client_metadata_url`` where the server supports Client ID Metadata Documents, else a client
    registered now (RFC 7591 dynamic registration, once per authorization server).

    Args:
        authorize: ``(authorization_url) -> callback_url``, the browser step:
            ``loopback_authorize()`` for desktops, ``headless_authorize()`` for servers that
            approve without a user.
        redirect_uri: where the authorization server sends the user back.
        client_id: a pre-registered client.
        client_secret: that client's secret (needs ``client_id``).
        private_key: that client's EC P-256 key in PEM, for ``private_key_jwt`` instead of a
            secret (needs ``client_id``; ``mcpclient[oauth]``).
        client_metadata_url: an HTTPS URL identifying this client (a Client ID Metadata Document).
        client_name: the name dynamic registration shows the user.
    """

    authorize: Authorize
    redirect_uri: str = _REDIRECT_URI
    client_id: Optional[str] = None
    client_secret: Optional[str] = field(default=None, repr=False)
    private_key: Optional[str] = field(default=None, repr=False)
    client_metadata_url: Optional[str] = None
    client_name: str = "mcpclient"

    def __post_init__(self) -> None:
        if not callable(self.authorize):
            raise TypeError("AuthorizationCode's authorize must be a callable (authorization_url) -> callback_url, "
                            f"such as loopback_authorize(); got {type(self.authorize).__name__}")
        _url("AuthorizationCode", "redirect_uri", self.redirect_uri, ("http", "https"), custom_scheme=True)
        _text("AuthorizationCode", "client_name", self.client_name)
        if self.client_metadata_url is not None:
            _url("AuthorizationCode", "client_metadata_url", self.client_metadata_url, ("https",))
        _identity("AuthorizationCode", self.client_id, self.client_secret, self.private_key)


@dataclass(frozen=True)
class ClientCredentials:
    """A back end acting as itself: the client credentials grant of a pre-registered client.

    Example::

        OAuth(ClientCredentials("svc", client_secret=os.environ["SVC_SECRET"]))

    Args:
        client_id: the client registered at the authorization server.
        client_secret: its secret; or
        private_key: its EC P-256 key in PEM, for ``private_key_jwt`` (RFC 7523;
            ``mcpclient[oauth]``). Exactly one of the two.
    """

    client_id: str
    client_secret: Optional[str] = field(default=None, repr=False)
    private_key: Optional[str] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _text("ClientCredentials", "client_id", self.client_id)
        if self.client_secret is None and self.private_key is None:
            raise ValueError("ClientCredentials needs client_secret or private_key")
        _identity("ClientCredentials", self.client_id, self.client_secret, self.private_key)


@dataclass(frozen=True)
class JWTBearer:
    """Workload identity: a JWT the platform issued, presented as an authorization grant (RFC 7523).

    One attempt: when the authorization server refuses the assertion no other grant is tried.

    Example::

        OAuth(JWTBearer(lambda: Path("/var/run/secrets/token").read_text()))

    Args:
        assertion: the JWT, or a callable returning the current one (called for every grant run).
        client_id: the client, when the authorization server wants one named.
        client_secret / private_key: that client's authentication, if it has one (at most one;
            needs ``client_id``).
    """

    assertion: JWTSource = field(repr=False)
    client_id: Optional[str] = None
    client_secret: Optional[str] = field(default=None, repr=False)
    private_key: Optional[str] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _source("JWTBearer", "assertion", self.assertion)
        _identity("JWTBearer", self.client_id, self.client_secret, self.private_key)


@dataclass(frozen=True)
class EnterpriseExchange:
    """Enterprise-managed authorization: the enterprise's identity provider exchanges the user's
    ID token (RFC 8693 token exchange) for an identity assertion grant (ID-JAG), which the MCP
    server's authorization server takes as a JWT bearer grant from this client.

    Example::

        OAuth(EnterpriseExchange(id_token=sso.id_token,
                                 idp_token_endpoint="https://idp.example/token",
                                 client_id="mcp-app",
                                 client_secret=os.environ["MCP_APP_SECRET"]))

    Args:
        id_token: the user's ID token from the identity provider, or a callable returning the
            current one.
        idp_token_endpoint: the identity provider's token endpoint, where the exchange happens.
        client_id / client_secret: this client at the MCP server's authorization server
            (``client_secret_basic``).
        idp_client_id: this client at the identity provider, when the exchange must name it.
    """

    id_token: JWTSource = field(repr=False)
    idp_token_endpoint: str
    client_id: str
    client_secret: str = field(repr=False)
    idp_client_id: Optional[str] = None

    def __post_init__(self) -> None:
        _source("EnterpriseExchange", "id_token", self.id_token)
        _url("EnterpriseExchange", "idp_token_endpoint", self.idp_token_endpoint, ("http", "https"))
        _text("EnterpriseExchange", "client_id", self.client_id)
        _text("EnterpriseExchange", "client_secret", self.client_secret)
        if self.idp_client_id is not None:
            _text("EnterpriseExchange", "idp_client_id", self.idp_client_id)


#: What ``OAuth`` takes: one of the grant values.
Grant = Union[AuthorizationCode, ClientCredentials, JWTBearer, EnterpriseExchange]

GRANTS = (AuthorizationCode, ClientCredentials, JWTBearer, EnterpriseExchange)


# --- the checks (messages name the setting, never its value: it may be a secret) ----------------

def _text(grant: str, name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{grant}'s {name} must be a string, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{grant}'s {name} is empty")


def _source(grant: str, name: str, value: object) -> None:
    if callable(value):
        return
    if not isinstance(value, str):
        raise TypeError(f"{grant}'s {name} must be a JWT string or a callable returning one, "
                        f"not {type(value).__name__}")
    if not value:
        raise ValueError(f"{grant}'s {name} is empty")


def _url(grant: str, name: str, value: object, schemes: Tuple[str, ...], custom_scheme: bool = False) -> None:
    _text(grant, name, value)
    parts = urlsplit(str(value))
    if parts.scheme in schemes and parts.netloc:
        return
    if custom_scheme and parts.scheme and parts.scheme not in ("http", "https"):
        return  # a private-use URI scheme (RFC 8252 §7.1): com.example.app:/callback
    kind = "" if custom_scheme else " or ".join(schemes) + " "
    raise ValueError(f"{grant}'s {name} must be an absolute {kind}URL, not {value!r}")


def _identity(grant: str, client_id: Optional[str], client_secret: Optional[str],
              private_key: Optional[str]) -> None:
    """A client's identity: an optional ``client_id`` authenticated by a secret, a key, or nothing."""
    if client_id is not None:
        _text(grant, "client_id", client_id)
    if client_secret is not None:
        _text(grant, "client_secret", client_secret)
    if private_key is not None:
        _text(grant, "private_key", private_key)
    if client_secret is not None and private_key is not None:
        raise ValueError(f"{grant} takes client_secret or private_key, not both")
    if client_id is None and (client_secret is not None or private_key is not None):
        raise ValueError(f"{grant}'s {'client_secret' if client_secret is not None else 'private_key'} "
                         "authenticates a registered client: give its client_id too")
    if private_key is not None:
        signing_key(private_key)  # a key that cannot sign fails here, not at the first token request


def signing_key(pem: str) -> "EllipticCurvePrivateKey":
    """The P-256 key in ``pem`` (``ValueError`` naming what is wrong, never the key;
    ``MissingExtraError`` without ``mcpclient[oauth]``)."""
    jwt = load("mcpclient.auth.jwt")  # the optional extra (cryptography)
    try:
        return jwt.load_ec_private_key(pem)
    except (ValueError, IndexError) as exc:
        raise ValueError(f"private_key must be an EC P-256 key in PEM: {exc}") from None
