"""The live path of smartstack-desktop on a real usage log: `smartstack-desktop --replay desktop.tsv` feeds every
`open` row as an application unit becoming active and every `home` row as an unlock through the same tracker and
calls the D-Bus handlers use, into a real smartstackd, and scores the orders smartstackd gives at the home
moments. They must score as `smartstack-eval` scores the engine on the same log (docs/usage-log.md), within
0.002 on hit@1 and MRR, with the same moments counted."""
import json
import os
import pathlib
import re
import subprocess

import pytest

from conftest import BUILD, ROOT

DESKTOP = pathlib.Path(os.environ.get("SMARTSTACK_DESKTOP", BUILD / "smartstack-desktop"))
EVAL = BUILD / "smartstack-eval"
USAGE_LOG = ROOT.parent / "shared" / "data" / "usage" / "desktop.tsv"

pytestmark = pytest.mark.skipif(
    not USAGE_LOG.exists() or not DESKTOP.exists() or not EVAL.exists(),
    reason="needs ../shared/data/usage/desktop.tsv, smartstack-desktop and smartstack-eval")

LINE = re.compile(
    r"moments (\d+) counted (\d+) coverage [\d.]+ hit@1 ([\d.]+) hit@3 ([\d.]+) MRR ([\d.]+) calls (\d+) refused (\S+)")


def test_live_path_scores_as_smartstack_eval(daemon):
    expected = json.loads(subprocess.run(
        [str(EVAL), "--json", str(USAGE_LOG)], capture_output=True, text=True, check=True, timeout=300).stdout)
    engine = expected["rankers"]["engine"]
    result = subprocess.run(
        [str(DESKTOP), "--replay", str(USAGE_LOG), "--socket", daemon.socket_path],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    match = LINE.search(result.stdout)
    assert match, result.stdout
    moments, counted, hit1, hit3, mrr, calls, refused = match.groups()
    print(f"live path: hit@1 {hit1} hit@3 {hit3} MRR {mrr} ({counted} counted); smartstack-eval: hit@1 {engine['hit1']} "
          f"MRR {engine['mrr']} ({expected['counted']} counted)")
    assert refused == "none"
    assert int(moments) == expected["moments"]
    assert int(counted) == expected["counted"]
    assert abs(float(hit1) - engine["hit1"]) <= 0.002
    assert abs(float(mrr) - engine["mrr"]) <= 0.002
    # The service saw every row: one donation per open row, and a stack per user.
    assert int(calls) > 21000
