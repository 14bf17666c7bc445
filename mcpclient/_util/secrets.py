"""What counts as a secret a transport sends on its own: values under secret-looking keys (a
header, an environment variable, a ``--token=...`` argument), the password and secret query
values of a URL, and the words of such a value worth scrubbing from a recording (``"Bearer
sk-..."``: the token alone). Transports report theirs (``Transport.secrets``); a cassette
scrubs them wherever a server echoes one back. Standard library only.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Mapping, Set

from .lazy import load

__all__ = ["command_secrets", "is_secret_key", "mapping_secrets", "masked", "secret_words", "url_secrets"]

#: Keys whose (string or structured) values are secrets, in messages, headers and environments
#: alike (case-insensitive). A pattern, compiled (and cached by ``re``) by its first use: most
#: stdio command lines never need it, and compiling it costs a one-shot call about 0.5 ms.
SECRET_KEY = (r"authori[sz]ation|token|secret|passw(or)?d|passphrase|api[-_]?key|cookie|credential|private[-_]?key"
              r"|session[-_]?key")
#: Keys that look secret but are protocol bookkeeping the replay needs (numbers in practice).
NOT_SECRET = {"progresstoken", "maxtokens", "nextcursor", "cursor", "token_type", "tokentype"}
#: Words of a secret value that are no secret (``"Bearer sk-..."``): never scrubbed on their own.
SCHEMES = {"bearer", "basic", "digest", "negotiate"}
#: Secret strings shorter than this are not scrubbed from the rest of a recording (too common).
MIN_SCRUB = 6


def is_secret_key(key: Any) -> bool:
    """Whether ``key`` names a secret (``Authorization``, ``api_key``, ``MY_TOKEN``...)."""
    return isinstance(key, str) and key.lower() not in NOT_SECRET and re.search(SECRET_KEY, key, re.I) is not None


def secret_words(value: str) -> Iterator[str]:
    """``value`` and its words, each long enough to scrub."""
    for word in {value, *value.split()}:
        if len(word) >= MIN_SCRUB and word.lower() not in SCHEMES:
            yield word


def mapping_secrets(values: Mapping[Any, Any]) -> Set[str]:
    """The words of the values under secret-looking keys (headers, an environment)."""
    found: Set[str] = set()
    for key, value in values.items():
        if isinstance(value, str) and is_secret_key(key):
            found.update(secret_words(value))
    return found


def url_secrets(url: str) -> Iterator[str]:
    """The password in ``url``'s user info and the values of its secret-looking query keys.
    (``urllib.parse`` loads with the first URL: a stdio-only program never needs it.)"""
    parse = load("urllib.parse")
    try:
        parts = parse.urlsplit(url)
        password = parts.password
    except ValueError:
        return
    if password:
        yield from secret_words(password)
    for key, value in parse.parse_qsl(parts.query, keep_blank_values=False):
        if is_secret_key(key):
            yield from secret_words(value)


def command_secrets(argv: Iterable[str]) -> Set[str]:
    """What a command line carries that is secret: ``--token=...`` and ``--api-key VALUE`` style
    arguments, and the secrets of the URLs among its arguments."""
    found: Set[str] = set()
    items = [a for a in argv if isinstance(a, str)]
    for i, item in enumerate(items):
        key, eq, value = item.lstrip("-").partition("=")
        if eq and is_secret_key(key):
            found.update(secret_words(value))
        elif item.startswith("-") and is_secret_key(key) and i + 1 < len(items):
            found.update(secret_words(items[i + 1]))
        elif "://" in item:
            found.update(url_secrets(item))
    return found


def masked(text: str, secrets: Iterable[str]) -> str:
    """``text`` (something a server wrote, to quote in an error) with each of ``secrets``, and
    each word of them worth scrubbing, replaced by ``***``."""
    words = {word for secret in secrets for word in secret_words(secret)}
    for word in sorted(words, key=len, reverse=True):  # (a secret before the words it holds)
        text = text.replace(word, "***")
    return text
