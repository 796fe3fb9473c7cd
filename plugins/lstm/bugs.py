"""Placeholder replaced below."""
BUGS = {}
