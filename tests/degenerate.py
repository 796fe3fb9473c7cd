"""Submissions that do no work, made from an assignment's own stubs: `lmgrade.prove.degenerate`, which
`lmgrade selftest` grades too, under the name the tests import."""

from __future__ import annotations

from lmgrade.prove.degenerate import CONSTANTS, RAISES, degenerate_source, write_degenerate

__all__ = ["CONSTANTS", "RAISES", "degenerate_source", "write_degenerate"]
