"""Student bundles: the starter files and the public checks, to run on a student's machine.

`build` makes one (`lmgrade student-bundle`): the stubs and handout, and a
wheel with the harness, the graders' scenarios and judges (`sources`) and
the public checks' fixtures, recorded from the reference. Installed, the
wheel gives `lmgrade check` its checks and expected values (`public`) and
pytest a plugin that runs them (`pytest_plugin`).
"""
