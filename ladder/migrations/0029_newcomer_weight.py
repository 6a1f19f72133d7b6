"""New accounts carry less weight (docs/rules.md §15): two rating settings.

Ladders that exist keep rating as they did (newcomer games 0, the rule off): switching it
on is a rating-settings change, recorded so replays apply it from its instant. New ladders
start with it on.
"""

from django.conf import settings
from django.db import migrations, models

import ladder.models.ladder


class Migration(migrations.Migration):

    dependencies = [
        ('ladder', '0028_player_mark'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='ladder',
            name='newcomer_cap',
            field=models.FloatField(default=30.0, validators=[ladder.models.ladder.validate_newcomer_cap], help_text='The most one game against newcomers only can move a rating, in points. A regular at RD 60 moves a few points in a game against a newcomer anyway; the cap bounds the big moves of two new ratings.', verbose_name='newcomer cap'),
        ),
        migrations.AddField(
            model_name='ladder',
            name='newcomer_games',
            field=models.PositiveSmallIntegerField(default=0, help_text='New accounts carry less weight: a player whose every opponent in a game has fewer rated games on this ladder than this moves at most the newcomer cap in it, up or down. It bounds what throwaway accounts can feed one player. 0 switches it off.', verbose_name='newcomer games'),
        ),
        migrations.AlterField(
            model_name='ladder',
            name='newcomer_games',
            field=models.PositiveSmallIntegerField(default=5, help_text='New accounts carry less weight: a player whose every opponent in a game has fewer rated games on this ladder than this moves at most the newcomer cap in it, up or down. It bounds what throwaway accounts can feed one player. 0 switches it off.', verbose_name='newcomer games'),
        ),
        migrations.AddConstraint(
            model_name='ladder',
            constraint=models.CheckConstraint(condition=models.Q(('newcomer_cap__gt', 0)), name='ladder_newcomer_cap_positive'),
        ),
    ]
