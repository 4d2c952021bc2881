#!/usr/bin/env python3
"""Flag = test file = doc page: every pass the project declares (the
`Pass<"flag", ...>` records of its Passes.td files, and the `getArgument()`
of passes written in C++ alone) and every pipeline it
registers (`PassPipelineRegistration`) needs a test file named after the
flag under test/ and a page docs/passes/<flag>.md (pipelines: also named in
docs/UserGuide.md). Prints what is missing and
'pass coverage: N passed, M failed'; exits 1 on a gap.

Usage: check_pass_coverage.py SRC_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
flags, pipelines = [], []
for dirpath, _, files in os.walk(os.path.join(root, "include")):
    for f in files:
        if f == "Passes.td":
            flags += re.findall(r'Pass<"([a-z0-9-]+)"', open(os.path.join(dirpath, f)).read())
for dirpath, _, files in os.walk(os.path.join(root, "lib")):
    for f in files:
        if f.endswith(".cpp"):
            text = open(os.path.join(dirpath, f)).read()
            pipelines += re.findall(r'PassPipelineRegistration<[^>]*>\(\s*"([a-z0-9-]+)"', text)
            # Passes written without a .td record (PassWrapper).
            flags += re.findall(r'getArgument\(\) const override\s*\{\s*return "([a-z0-9-]+)"', text)
tests = set()
for dirpath, _, files in os.walk(os.path.join(root, "test")):
    tests.update(files)
guide = open(os.path.join(root, "docs", "UserGuide.md")).read()
passed, failed = 0, []
for flag in sorted(set(flags)):
    if not any(t.startswith(flag + ".") or t.startswith(flag + "-") for t in tests):
        failed.append(f"pass '{flag}': no test file named after it")
    elif not os.path.exists(os.path.join(root, "docs", "passes", flag + ".md")):
        failed.append(f"pass '{flag}': no docs/passes/{flag}.md")
    else:
        passed += 1
for flag in sorted(set(pipelines)):
    if not any(t.startswith(flag + ".") or t.startswith(flag + "-") for t in tests):
        failed.append(f"pipeline '{flag}': no test file named after it")
    elif not os.path.exists(os.path.join(root, "docs", "passes", flag + ".md")):
        failed.append(f"pipeline '{flag}': no docs/passes/{flag}.md")
    elif flag not in guide:
        failed.append(f"pipeline '{flag}': not in docs/UserGuide.md")
    else:
        passed += 1
for f in failed:
    print("FAIL:", f)
print(f"pass coverage: {passed} passed, {len(failed)} failed ({len(set(flags))} passes, "
      f"{len(set(pipelines))} pipelines)")
sys.exit(1 if failed or not flags else 0)
