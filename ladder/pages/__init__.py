"""The ladder's pages: views, their forms, the home page's and player page's reads, and the
header's counts. Nothing inside ``ladder`` imports this room; ``ladder.urls`` and
``config.urls`` route to it.
"""
