"""The documents point at things that exist: every file of the repository they name in backticks, every pytest test
they name as `file.py::test_name`, and every Swift test they name as `SuiteTests.function`."""
import re
import subprocess

from conftest import ROOT

DOCUMENTS = ["README.md", "BENCHMARKS.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
# Paths written with a placeholder (`Tests/fuzz/corpus/TARGET/`: one folder per fuzz target).
PLACEHOLDERS = ("TARGET",)


def tracked_files():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0:
        return set(listed.stdout.splitlines())
    # Not a git checkout (an unpacked archive): the files on disk, without build products.
    return {str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not str(p.relative_to(ROOT)).startswith((".build", ".git"))}


def documents():
    for name in DOCUMENTS:
        yield name, (ROOT / name).read_text()


def test_named_files_exist():
    files = tracked_files()
    folders = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    missing = []
    for name, text in documents():
        for match in re.finditer(r"`((?:Sources|Tests|bench|docs|packaging|\.ci)/[A-Za-z0-9_./+-]+)`", text):
            path = match.group(1).rstrip("./")
            if any(part in path for part in PLACEHOLDERS):
                continue
            if path not in files and path not in folders:
                missing.append(f"{name}: {path}")
    assert not missing, "\n".join(missing)


def test_named_pytest_tests_exist():
    missing = []
    for name, text in documents():
        for match in re.finditer(r"(test_[a-z0-9_]+\.py)::(test_[a-z0-9_]+)", text):
            found = list((ROOT / "Tests").rglob(match.group(1)))
            if not found or f"def {match.group(2)}(" not in found[0].read_text():
                missing.append(f"{name}: {match.group(0)}")
    assert not missing, "\n".join(missing)


def test_named_swift_tests_exist():
    sources = {p: p.read_text() for p in (ROOT / "Tests").rglob("*.swift")}
    missing = []
    for name, text in documents():
        for match in re.finditer(r"\b([A-Z][A-Za-z0-9]+Tests)\.([a-z][A-Za-z0-9_]*)\b", text):
            suite, function = match.groups()
            if function == "swift":
                continue  # a file name, checked as a path
            declaring = [s for s in sources.values() if re.search(rf"\b(struct|class|extension) {suite}\b", s)]
            if not any(re.search(rf"\bfunc {function}\b", s) for s in declaring):
                missing.append(f"{name}: {match.group(0)}")
    assert not missing, "\n".join(missing)
