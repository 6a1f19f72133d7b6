"""How well a ladder's ratings predict its results: replay, score, tune (issue 17).

Pure Python like ``ratings.engines``, whose maths it replays unchanged: no Django import,
so ``python -m ratings.backtest --csv FILE`` runs anywhere. ``data`` reads results,
``replay`` records each match's prediction before its update, ``metrics`` scores
predictions, ``tune`` searches parameters on the past and ``run`` puts them together.
"""
