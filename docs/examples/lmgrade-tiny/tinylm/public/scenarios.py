"""Run in the sandbox: call the submission, return plain data (never import the reference)."""


def mean(modules, args):
    return modules["stats"].mean(args["values"])
