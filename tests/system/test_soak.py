"""The soak (issue 23, soak.py) for a bounded time: the same load, hostile process and
self-modifying program as `make soak`'s ten minutes, and the same verdict."""
import io

from soak import soak

DURATION_S = 30  # with both cards' boots, under a minute on an idle host


def test_soak_bounded():
    report = io.StringIO()
    ok = soak(DURATION_S, report)
    assert ok, report.getvalue()
