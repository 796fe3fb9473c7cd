"""The suite's fuzzing of the child boundary (tests/test_child_frames.py), run far longer.

    python benchmarks/fuzz_child_frames.py [--examples 5000]

Each property of the suite (a case result of any bytes is an outcome, the wire decoder raises only its own
error, frames of any kind leave every case an outcome, the import probe's answer of any shape is names, a
stub's location is read from the grader's own sources, every outcome is told in words and a hidden one in
fixed words) runs on --examples drawn inputs instead of the suite's hundred; this prints each one's time and
its examples per second, and fails on the first input that breaks a property.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import test_child_frames as properties  # noqa: E402
from hostile_frames import documents, error_reports, frame_streams, payloads, traceback_text  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from lmgrade.declare import catalog  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000)
    args = parser.parse_args()
    ngram = catalog.load("ngram")
    runs = {
        "case result": (properties.test_a_case_result_of_any_bytes_is_an_outcome, (payloads,)),
        "wire decoder": (
            properties.test_the_wire_decoder_raises_only_its_own_error,
            (st.binary(max_size=300) | payloads,),
        ),
        "frame streams": (
            properties.test_frames_of_any_kind_leave_every_case_an_outcome,
            (st.integers(1, 4).flatmap(lambda n: st.tuples(st.just(n), frame_streams(n))),),
        ),
        "probe names": (
            properties.test_the_import_probes_answer_of_any_shape_is_names_of_the_submissions_modules,
            (documents, st.lists(st.sampled_from(["ngram", "helpers", "x"]), max_size=3)),
        ),
        "stub location": (
            properties.test_where_a_stub_raised_is_read_from_the_graders_sources_only,
            (
                st.lists(error_reports.map(properties.schema.error_report) | st.none(), min_size=1, max_size=3),
                traceback_text(),
            ),
        ),
    }
    long = settings(max_examples=args.examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    for name, (test, strategies) in runs.items():
        inner = test.hypothesis.inner_test
        t0 = time.perf_counter()
        long(given(*strategies)(inner))()
        seconds = time.perf_counter() - t0
        print(f"{name:14s} {args.examples} examples in {seconds:6.1f} s ({args.examples / seconds:7.0f}/s)")
    told = properties.test_every_outcome_a_child_can_send_is_told_in_words_and_hidden_ones_in_fixed_words
    t0 = time.perf_counter()
    long(given(data=st.data())(lambda data: told.hypothesis.inner_test(ngram, data)))()
    seconds = time.perf_counter() - t0
    print(f"{'told in words':14s} {args.examples} examples in {seconds:6.1f} s ({args.examples / seconds:7.0f}/s)")


if __name__ == "__main__":
    main()
