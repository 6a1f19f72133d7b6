"""Which addresses a webhook may reach: literals in every IPv6 disguise, names checked when the
webhook is saved and again when a delivery connects, to the address checked (no DNS rebinding).

Names are answered by a resolver the test passes in (``resolve=``), never the system's.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError

from webhooks.addresses import Private, address_is_public, host_address
from webhooks.delivery import delivery_attempt
from webhooks.models import URL_PRIVATE, DeliveryStatus, Webhook, WebhookDelivery, webhook_url_check
from webhooks.services import webhook_emit

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def resolver(*answers: list[str]):
    """A resolver giving each call the next of ``answers`` (the last one again once they run out)."""
    calls: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        return answers[min(len(calls), len(answers)) - 1]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def nowhere(host: str, port: int) -> list[str]:
    raise OSError("Name or service not known")


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.7", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255",
        "::1", "::", "fe80::1", "fc00::1", "ff02::1",
        "64:ff9b::a00:7",  # NAT64 of 10.0.0.7
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b:1::808:808",  # local-use NAT64: what it reaches is the network's own choice
        "2002:a00:7::1",  # 6to4 of 10.0.0.7
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "::a00:7",  # IPv4-compatible 10.0.0.7
        "::7f00:1",  # IPv4-compatible 127.0.0.1
        "::ffff:10.0.0.7",  # IPv4-mapped
        "::ffff:0:a00:7",  # IPv4-translated
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "fec0::1",  # site-local
        "not an address",
    ],
)  # fmt: skip
def test_addresses_that_reach_no_public_host_are_refused(address):
    assert not address_is_public(address)


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"],
)
def test_public_addresses_pass_in_any_form(address):
    assert address_is_public(address)


def test_a_name_is_refused_when_any_of_its_addresses_is_private():
    with pytest.raises(Private) as refused:
        host_address("hooks.example.test", 443, resolve=resolver(["8.8.8.8", "64:ff9b::a00:7"]))
    assert refused.value.address == "64:ff9b::a00:7"

    assert host_address("hooks.example.test", 443, resolve=resolver(["8.8.8.8", "1.1.1.1"])) == "8.8.8.8"
    assert host_address("hooks.example.test", 443, resolve=resolver(["10.0.0.7"]), allow_private=True) == "10.0.0.7"


def test_saving_resolves_the_name_and_names_the_private_address():
    with pytest.raises(ValidationError) as refused:
        webhook_url_check("https://hooks.example.test/x", resolve=resolver(["2002:a00:7::1"]))

    assert refused.value.messages == [
        "hooks.example.test resolves to 2002:a00:7::1, an address on a private or local network; "
        "webhooks only go to the public internet."
    ]
    webhook_url_check("https://hooks.example.test/x", resolve=resolver(["8.8.8.8"]))
    webhook_url_check("https://not-yet.example.test/x", resolve=nowhere)  # checked again at each delivery


def test_a_literal_is_judged_without_asking_the_resolver():
    resolve = resolver(["8.8.8.8"])

    with pytest.raises(ValidationError) as refused:
        webhook_url_check("http://[64:ff9b::a00:7]/hook", resolve=resolve)

    assert refused.value.messages == [URL_PRIVATE] and resolve.calls == []


def test_private_addresses_pass_when_the_setting_allows_them(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True

    webhook_url_check("http://hooks.example.test/x", resolve=resolver(["10.0.0.7"]))
    webhook_url_check("http://127.0.0.1:8000/x")


@pytest.mark.django_db
def test_a_delivery_connects_to_the_address_it_checked_and_names_the_host(ladder, receiver):
    port = receiver.server.server_address[1]
    Webhook.objects.create(
        ladder=ladder, name="bot", url=f"http://hooks.example.test:{port}/bot", events=["match.rated"]
    )
    webhook_emit(ladder_id=ladder.pk, event="match.rated", data={}, summary="a beat b", url="/", now=T0)
    [sent] = WebhookDelivery.objects.all()

    resolve = resolver(["127.0.0.1"])
    assert delivery_attempt(delivery_id=sent.pk, now=T0, resolve=resolve).status == DeliveryStatus.DELIVERED

    [got] = receiver.received
    assert got.headers["Host"] == f"hooks.example.test:{port}" and resolve.calls == ["hooks.example.test"]


@pytest.mark.django_db
def test_a_name_switched_to_a_private_address_after_saving_is_refused_at_delivery(ladder, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    port = receiver.server.server_address[1]
    url = f"http://hooks.example.test:{port}/bot"
    rebinding = resolver(["8.8.8.8"], ["127.0.0.1"])  # public while saved, then the server's own loopback
    webhook_url_check(url, resolve=rebinding)
    Webhook.objects.create(ladder=ladder, name="bot", url=url, events=["match.rated"])
    webhook_emit(ladder_id=ladder.pk, event="match.rated", data={}, summary="a beat b", url="/", now=T0)
    [sent] = WebhookDelivery.objects.all()

    delivery_attempt(delivery_id=sent.pk, now=T0, resolve=rebinding)

    sent.refresh_from_db()
    assert receiver.received == [] and rebinding.calls == ["hooks.example.test", "hooks.example.test"]
    assert sent.error == "Refused: hooks.example.test resolves to a private or local address."
    assert sent.status == DeliveryStatus.PENDING and sent.response_code is None


@pytest.mark.django_db
def test_a_name_that_does_not_resolve_at_delivery_is_a_failure(ladder, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    Webhook.objects.create(ladder=ladder, name="bot", url="http://gone.example.test/bot", events=["match.rated"])
    webhook_emit(ladder_id=ladder.pk, event="match.rated", data={}, summary="a beat b", url="/", now=T0)
    [sent] = WebhookDelivery.objects.all()

    delivery_attempt(delivery_id=sent.pk, now=T0, resolve=nowhere)

    sent.refresh_from_db()
    assert sent.error == "Cannot resolve gone.example.test: Name or service not known"
