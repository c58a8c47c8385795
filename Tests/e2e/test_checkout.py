"""The suite passes from any checkout, including a private one: a clone made as root into a 0700 directory (as
in /root/...), which no other uid can enter. Every test file that runs processes as other uids (it uses
setpriv) runs there again, from that clone, with the binary in its own .build: everything those processes
execute or read has to be copied somewhere world-readable first (conftest.py's readable_copy)."""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import CTL, DAEMON, DESKTOP, ROOT

GIT = shutil.which("git")
HERE = pathlib.Path(__file__).resolve()


def other_uid_test_files():
    """The e2e test files that run something as another uid."""
    return sorted(path.name for path in HERE.parent.glob("test_*.py")
                  if path != HERE and "setpriv" in path.read_text())


def checkout_files():
    """The files a clone of the working tree holds: tracked ones and new ones not ignored, as they are now."""
    listed = subprocess.run([GIT, "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True, timeout=60).stdout
    return [name.decode() for name in listed.split(b"\0") if name]


@pytest.mark.skipif(
    os.geteuid() != 0 or GIT is None or shutil.which("setpriv") is None or not (ROOT / ".git").exists(),
    reason="needs root, git, setpriv and a git checkout")
def test_the_other_uid_tests_pass_from_a_clone_in_a_private_directory():
    with tempfile.TemporaryDirectory(prefix="smartstack-private-") as private:
        os.chmod(private, 0o700)
        clone = pathlib.Path(private) / "smartstackd"
        subprocess.run([GIT, "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120,
                       capture_output=True)
        # The clone has the last commit; bring it to the working tree's state so that uncommitted work is tested.
        for name in checkout_files():
            source = ROOT / name
            if source.is_file():
                target = clone / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        # The clone's own build directory, as after `swift build` there (only the binaries these tests start).
        build = clone / ".build" / "debug"
        build.mkdir(parents=True)
        shutil.copy2(DAEMON, build / "smartstackd")
        shutil.copy2(CTL, build / "smartstackctl")
        shutil.copy2(DESKTOP, build / "smartstack-desktop")
        assert oct(os.stat(private).st_mode & 0o777) == "0o700"

        environment = {key: value for key, value in os.environ.items()
                       if key not in ("SMARTSTACK_BUILD", "SMARTSTACKD", "SMARTSTACKCTL", "PYTEST_ADDOPTS")}
        files = other_uid_test_files()
        assert "test_systemd.py" in files, files
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
             *[f"Tests/e2e/{name}" for name in files]],
            cwd=clone, env=environment, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stdout + result.stderr
        # They ran from the clone, and none of those needing other uids was skipped.
        assert " passed" in result.stdout and "failed" not in result.stdout, result.stdout
        assert "other uids" not in result.stdout, result.stdout
