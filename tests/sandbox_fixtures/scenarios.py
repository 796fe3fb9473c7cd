"""A scenario for the sandbox tests: call the named function of the submission."""


def call(modules, case):
    return getattr(modules["victim"], case["fn"])(*case.get("args", []))


def timed(modules, case):
    """Laps on the fork server's clock: each calls the named function with the lap's nonce."""
    from lmgrade.sandbox import stopwatch

    fn = getattr(modules["victim"], case["fn"])
    for _ in range(case["laps"]):
        nonce = stopwatch.start()
        stopwatch.stop([fn(nonce)])
    return "done"


def with_expected_part(modules, case):
    """The named function's answer, and a part only the expected value computes (`lmgrade.expected_only`)."""
    from lmgrade import expected_only

    fn = getattr(modules["victim"], case["fn"])
    return {"answer": fn(*case.get("args", [])), "table": expected_only(lambda: fn(*case.get("args", [])))}


def with_explanation(modules, case):
    """The named function's answer, and a part only a wrong answer's explanation computes (`lmgrade.explained`)."""
    from lmgrade import explained

    fn = getattr(modules["victim"], case["fn"])
    return {"answer": fn(*case.get("args", [])), "why": explained(lambda: "worked out")}
