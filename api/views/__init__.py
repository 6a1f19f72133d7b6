"""API views: parse input, call one service or selector, render. One view per resource."""
