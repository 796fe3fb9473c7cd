"""A scenario for the sandbox tests: call the named function of the submission."""


def call(modules, case):
    return getattr(modules["victim"], case["fn"])(*case.get("args", []))
