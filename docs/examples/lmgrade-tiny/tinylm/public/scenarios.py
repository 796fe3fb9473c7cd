"""Run in the sandbox: call the submission, return plain data (never import the reference)."""


def mean(modules, values):
    return modules["stats"].mean(values)
