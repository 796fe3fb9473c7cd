"""The Gradescope autograder: the zip `lmgrade gradescope` builds and what runs inside it.

build.py      the zip: a wheel of lmgrade, its requirements, the config, the two scripts
wheel.py      the wheel, built from lmgrade's source folder, and what it needs installed
config.py     the zip's config: assignment, variant, course secret, checks, time budget
layout.py     where Gradescope puts things (/autograder/...)
supervise.py  what `run_autograder` runs: always leaves a valid results.json
grade.py      the grading process the supervisor starts: one `grade_submission` call
local.py      a zip installed and run on this machine, in a folder laid out like /autograder
trial.py      `lmgrade gradescope --try`: the zip just built, tried on one submission
templates/    setup.sh and run_autograder, rendered into the zip
"""
