"""What grading gives (Verdict, GradingRun) and how it is shown: terminal tables, the feedback page and
its pictures, Gradescope's results.json.

May import: boundary, core, submissions, sandbox, declare.
"""
