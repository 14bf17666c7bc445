"""The grants OAuth takes are frozen values, checked when made: a wrong type or a combination that
cannot work is a TypeError or ValueError at construction, and no secret is in any repr."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import pytest

from mcpclient import AuthError
from mcpclient.auth import AuthorizationCode, ClientCredentials, EnterpriseExchange, JWTBearer, OAuth
from mcpclient.auth.discovery import AuthServer

SECRET = "s3cret-value-123"


def login(url: str) -> str:
    return "http://127.0.0.1:33418/callback?code=c&state=s"


def enterprise(**changes: Any) -> EnterpriseExchange:
    settings = dict(id_token="id-token-" + SECRET, idp_token_endpoint="https://idp.example/token",
                    client_id="app", client_secret=SECRET)
    return EnterpriseExchange(**dict(settings, **changes))


@pytest.mark.parametrize("make, error, words", [
    (lambda: OAuth("client_credentials"), TypeError, "takes a grant value"),
    (lambda: OAuth(ClientCredentials), TypeError, "takes a grant value"),
    (lambda: ClientCredentials("svc"), ValueError, "client_secret or private_key"),
    (lambda: ClientCredentials("svc", client_secret=SECRET, private_key="pem"), ValueError, "not both"),
    (lambda: ClientCredentials("", client_secret=SECRET), ValueError, "client_id is empty"),
    (lambda: ClientCredentials(None, client_secret=SECRET), TypeError, "client_id must be a string"),
    (lambda: AuthorizationCode(None), TypeError, "authorize must be a callable"),
    (lambda: AuthorizationCode(login, client_secret=SECRET), ValueError, "give its client_id too"),
    (lambda: AuthorizationCode(login, client_id="app", client_secret=SECRET, private_key="pem"), ValueError,
     "not both"),
    (lambda: AuthorizationCode(login, redirect_uri="callback"), ValueError, "redirect_uri must be an absolute URL"),
    (lambda: AuthorizationCode(login, client_metadata_url="http://app.example/client.json"), ValueError,
     "client_metadata_url must be an absolute https URL"),
    (lambda: JWTBearer(None), TypeError, "assertion must be a JWT string or a callable"),
    (lambda: JWTBearer(""), ValueError, "assertion is empty"),
    (lambda: JWTBearer("jwt", client_secret=SECRET), ValueError, "give its client_id too"),
    (lambda: enterprise(id_token=None), TypeError, "id_token must be a JWT string or a callable"),
    (lambda: enterprise(idp_token_endpoint="idp.example/token"), ValueError, "idp_token_endpoint must be an absolute"),
    (lambda: enterprise(client_secret=""), ValueError, "client_secret is empty"),
    (lambda: OAuth(JWTBearer("jwt"), scopes="read write"), TypeError, "list of scope names"),
    (lambda: OAuth(JWTBearer("jwt"), dpop="yes"), ValueError, "dpop must be"),
    (lambda: OAuth(JWTBearer("jwt"), timeout=0), ValueError, "timeout must be a positive"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_a_wrong_setting_is_refused_when_made_naming_it_and_never_a_secret(
        make: Callable[[], object], error: type, words: str) -> None:
    with pytest.raises(error, match=words) as refused:
        make()
    assert SECRET not in str(refused.value)


def test_a_private_key_that_cannot_sign_is_refused_when_the_grant_is_made() -> None:
    pytest.importorskip("cryptography")
    for grant in (ClientCredentials, lambda c, private_key: AuthorizationCode(login, client_id=c,
                                                                               private_key=private_key)):
        with pytest.raises(ValueError, match="EC P-256 key in PEM"):
            grant("svc", private_key="-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n")


def test_no_secret_is_in_the_repr_of_a_grant_or_of_oauth() -> None:
    grants = [ClientCredentials("svc", client_secret=SECRET), JWTBearer("jwt-" + SECRET, client_id="svc"),
              AuthorizationCode(login, client_id="app", client_secret=SECRET), enterprise()]
    for grant in grants:
        for text in (repr(grant), str(grant), repr(OAuth(grant))):
            assert SECRET not in text and "client_id=" in text, text
    assert repr(OAuth(grants[0])) == "<OAuth ClientCredentials client_id='svc' token=none>"


def test_a_grant_is_frozen_and_a_changed_copy_is_checked_again() -> None:
    grant = ClientCredentials("svc", client_secret=SECRET)
    with pytest.raises(dataclasses.FrozenInstanceError):
        grant.client_id = "other"  # type: ignore[misc]
    assert dataclasses.replace(grant, client_id="other").client_id == "other"
    with pytest.raises(ValueError, match="client_secret or private_key"):
        dataclasses.replace(grant, client_secret=None)
    assert grant == ClientCredentials("svc", client_secret=SECRET) and len({grant, grant}) == 1


def test_a_grant_shared_by_two_oauth_objects_keeps_no_state_of_either() -> None:
    """What one OAuth learns (the authorization server its credentials belong to) is its own:
    the grant value they share is unchanged, and the other OAuth learns its own."""
    grant = ClientCredentials("svc", client_secret=SECRET)
    first, second = OAuth(grant), OAuth(grant)
    first._flow.check_issuer(AuthServer("https://as-one.example", None, "https://as-one.example/token", None, {}))
    second._flow.check_issuer(AuthServer("https://as-two.example", None, "https://as-two.example/token", None, {}))
    with pytest.raises(AuthError, match="refusing to send them"):
        first._flow.check_issuer(AuthServer("https://as-two.example", None, "https://as-two.example/token", None, {}))
    assert grant == ClientCredentials("svc", client_secret=SECRET)


def test_the_grants_are_importable_where_oauth_is() -> None:
    import mcpclient.auth

    for name in ("AuthorizationCode", "ClientCredentials", "JWTBearer", "EnterpriseExchange", "Grant", "OAuth"):
        assert name in mcpclient.auth.__all__ and getattr(mcpclient.auth, name) is not None
