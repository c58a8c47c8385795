"""The soak's one-minute version (`make soak` runs ten minutes on the release build): 50 clients, 500 idle
connections, a subscriber that never reads, and kill -9 every 20 s, against the real daemon (Tests/soak/soak.py)."""
import pathlib
import re
import subprocess
import sys
import tempfile

from conftest import DAEMON, ROOT


def soak_directories():
    return set(pathlib.Path(tempfile.gettempdir()).glob("smartstack-soak-*"))


def test_one_minute_soak():
    before = soak_directories()
    result = subprocess.run(
        [sys.executable, str(ROOT / "Tests" / "soak" / "soak.py"), "--daemon", str(DAEMON), "--seconds", "60",
         "--restart-every", "20", "--clients", "50", "--idle", "500", "--no-latency-check"],
        capture_output=True, text=True, timeout=240)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    # soak.py prints every check with "ok" or "FAIL" in front.
    assert re.search(r"^ok\s+every acknowledged donation listed after each restart$", result.stdout, re.M), result.stdout
    # The run's state (its SQLite store, tens of MiB after a long soak) is removed with it.
    assert soak_directories() - before == set(), "the soak left its work directory behind"
