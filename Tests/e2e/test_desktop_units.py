"""smartstack-desktop's units as systemd reads them: `systemd-analyze verify` finds nothing, and the offline
`systemd-analyze security` exposure stays as low as smartstackd's (system 0.8 and user 1.0 with systemd 252)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

ANALYZE = shutil.which("systemd-analyze")
pytestmark = pytest.mark.skipif(ANALYZE is None, reason="needs systemd-analyze")


def staged(scope, directory):
    """A copy of the unit whose ExecStart names an executable stub (verify checks that the binary exists)."""
    source = ROOT / "systemd" / ("user" if scope == "user" else "") / "smartstack-desktop.service"
    stub = directory / "smartstack-desktop"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    original = source.read_text()
    copy = original.replace("\nExecStart=/usr/local/bin/smartstack-desktop", f"\nExecStart={stub}")
    assert copy != original
    path = directory / "smartstack-desktop.service"
    path.write_text(copy)
    return path


@pytest.mark.parametrize("scope,limit", [("system", 1.0), ("user", 1.0)])
def test_unit_verifies_and_is_hardened(scope, limit, tmp_path):
    unit = staged(scope, tmp_path)
    (tmp_path / "runtime").mkdir()
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "XDG_RUNTIME_DIR": str(tmp_path / "runtime"),
                   "SYSTEMD_COLORS": "0"}
    options = ["--user"] if scope == "user" else []
    verify = subprocess.run([ANALYZE, *options, "verify", str(unit)], capture_output=True, text=True,
                            env=environment, timeout=60)
    assert verify.returncode == 0 and verify.stderr == "", verify.stderr
    security = subprocess.run([ANALYZE, *options, "security", "--offline=yes", "--no-pager", str(unit)],
                              capture_output=True, text=True, env=environment, timeout=60)
    match = re.search(r"Overall exposure level for smartstack-desktop.service: ([\d.]+)", security.stdout)
    assert match, security.stdout + security.stderr
    assert float(match.group(1)) <= limit, security.stdout[-3000:]
    text = unit.read_text()
    for setting in ("Type=notify", "After=smartstackd.socket", "NoNewPrivileges=yes", "ProtectSystem=strict",
                    "RestrictAddressFamilies=AF_UNIX", "PrivateNetwork=yes", "StateDirectory=smartstack-desktop"):
        assert setting in text, setting
