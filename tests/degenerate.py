"""Submissions that do no work, made from an assignment's own stubs: `lmgrade.degenerate`, which
`lmgrade selftest` grades too, under the name the tests import."""

from __future__ import annotations

from lmgrade.degenerate import CONSTANTS, RAISES, degenerate_source, write_degenerate

__all__ = ["CONSTANTS", "RAISES", "degenerate_source", "write_degenerate"]
