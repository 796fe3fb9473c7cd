"""The one kind of failure that is the harness's, not the submission's."""


class HarnessFault(RuntimeError):
    """Grading cannot be trusted: the sandbox, the reference or a plugin failed.

    Whatever a submission does is graded (a crash, a hang, an import error is
    a verdict); only this is not. Every command turns it into a valid
    results.json that says so, and an exit status of 1.
    """
