"""Rating engines: pure Python, no Django import, no clock, no randomness.

Time and parameters always come in as arguments, so every function here can be tested,
benchmarked and reused on its own.
"""
