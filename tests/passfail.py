"""The PASS/FAIL lines of the Python checkers that e2e suites run, in one place.

tests/dashboards/check.py, tests/dashboards/deploy_check.py and tests/e2e/data/recommend/page.py
print one "PASS: <prefix><name>" or "FAIL: <prefix><name> (why)" line per check (prefixes
"dashboards/", "deploy/", "recommend/page-"), the lines tests/run-suite.sh counts, and exit 1
when a check failed: one reporter for the three instead of a copy in each. Standard library
only, as the checkers are.
"""


class Report:
    """report(ok, name, why=""): one line for a check; status(): the exit status."""

    def __init__(self, prefix):
        self.prefix, self.failed = prefix, 0

    def __call__(self, ok, name, why=""):
        if ok:
            print(f"PASS: {self.prefix}{name}")
        else:
            self.failed += 1
            print(f"FAIL: {self.prefix}{name}" + (f" ({why})" if why else ""))

    def status(self):
        return 1 if self.failed else 0
