import django.db.models.functions.text
from django.db import migrations, models
from django.db.models import Count, F
from django.db.models.functions import Lower


def unverify_duplicates(apps, schema_editor):
    """Before the constraint: where several accounts verified the same address, the one used
    last keeps it (the latest login, then the oldest account); the others become unverified.
    They keep the address, and a password reset for it now goes to the one that kept it."""
    User = apps.get_model("accounts", "User")
    verified = (
        User.objects.exclude(email="")
        .annotate(address=Lower("email"), verified=Lower("email_verified"))
        .filter(address=F("verified"))
    )
    duplicates = verified.values("address").annotate(n=Count("pk")).filter(n__gt=1).values_list("address", flat=True)
    for address in list(duplicates):
        holders = verified.filter(address=address).order_by(F("last_login").desc(nulls_last=True), "pk")
        keeper = holders.values_list("pk", flat=True)[0]
        User.objects.filter(pk__in=holders.exclude(pk=keeper).values("pk")).update(email_verified="")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_user_email_verified"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(unverify_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="user",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("email"),
                condition=models.Q(
                    ("email_verified__iexact", models.F("email")), models.Q(("email", ""), _negated=True)
                ),
                name="accounts_user_verified_email_unique",
                violation_error_message=(
                    "Another account has confirmed this address as its own, so it cannot be used for this one. "
                    "Use another address, or leave the field empty."
                ),
            ),
        ),
    ]
