"""Which addresses a webhook may reach: the public internet only, whatever form an address takes.

``ipaddress``'s ``is_global`` alone lets through IPv6 forms that carry an IPv4 address and
reach it through a translator or a tunnel: NAT64 (``64:ff9b::/96``), 6to4 (``2002::/16``),
IPv4-compatible (``::a.b.c.d``), IPv4-mapped (``::ffff:a.b.c.d``) and -translated
(``::ffff:0:a.b.c.d``). Such an address is judged by the IPv4 address it carries. Teredo
(``2001::/32``), local-use NAT64 (``64:ff9b:1::/48``) and the deprecated site-local
``fec0::/10`` are refused outright: what they reach cannot be told from the address.

A host name is resolved and every address it gives must be public (one private answer
among public ones is a refusal, not a choice). The check runs when a webhook is saved
(``webhooks.models.validate_webhook_url``) and again at each delivery
(``webhooks.delivery``), which connects to the very address it checked: a name switched
to a private address in between (DNS rebinding) is refused, not followed. The resolver is
a parameter, so tests answer for names without touching the system's resolver.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

Resolver = Callable[[str, int], list[str]]  # (host, port) -> its addresses, as text

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
TEREDO = ipaddress.IPv6Network("2001::/32")
SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")


class Unresolved(Exception):
    """The name has no address (or the resolver failed)."""


class Private(Exception):
    """The host is, or resolves to, an address that is not on the public internet."""

    def __init__(self, host: str, address: str, *, literal: bool) -> None:
        super().__init__(f"{host} resolves to {address}, which is not a public address")
        self.host = host
        self.address = address
        self.literal = literal  # the host is an address itself, not a name


def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives ``host``, in its order."""
    return [str(sockaddr[0]) for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to (mapped, translated, compatible, NAT64, 6to4), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64 or address in IPV4_COMPATIBLE or address in IPV4_TRANSLATED:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_is_public(text: str) -> bool:
    """Whether the address ``text`` (IPv4 or IPv6, a zone allowed) is on the public internet."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address in TEREDO or address in NAT64_LOCAL or address in SITE_LOCAL:
            return False
        carried = embedded_ipv4(address)
        if carried is not None:
            return address_is_public(str(carried))
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def host_address(host: str, port: int, *, resolve: Resolver = system_resolve, allow_private: bool = False) -> str:
    """The address to connect to for ``host``: the first it resolves to, once every one is
    checked. ``Unresolved`` if it has none, ``Private`` if any is not public (unless allowed)."""
    try:
        addresses = [str(ipaddress.ip_address(host))]  # a literal is its own answer
        literal = True
    except ValueError:
        addresses, literal = _resolved(host, port, resolve), False
    if not allow_private:
        for address in addresses:
            if not address_is_public(address):
                raise Private(host, address, literal=literal)
    return addresses[0]


def _resolved(host: str, port: int, resolve: Resolver) -> list[str]:
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as error:  # socket.gaierror is an OSError; a bad IDNA label a UnicodeError
        raise Unresolved(getattr(error, "strerror", None) or str(error)) from error
    if not addresses:
        raise Unresolved("no address")
    return addresses
