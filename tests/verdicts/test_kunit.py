"""Linux's KTAP parser on the harness's own whole-suite boot: kunit.py and the harness agree.

The boot is conftest.py's "tcg" platform, shared with test_kernel.py (booted once for both).
"""

import pytest

from switchyard import log as ktap
from conftest import load_platform
from kunit_tool import kunit, kunit_parse, same_counts  # noqa: F401: kunit is a fixture


@pytest.mark.boot
def test_kunit_parse_agrees_with_the_harness_on_the_whole_tcg_boot(tmp_path, kunit):
    """The harness's own "tcg" boot (shared with test_kernel.py): kunit.py exits 0
    exactly when our verdict is PASS, and counts what we count."""
    platform = load_platform("tcg")
    if platform.failure:
        pytest.fail(platform.failure, pytrace=False)
    result = platform.result
    assert not result.errors, result.errors
    (tmp_path / "serial.log").write_bytes(platform.raw)
    status, counts, stdout = kunit_parse(kunit, tmp_path / "serial.log")
    assert (status == 0) == (result.verdict == ktap.PASS), stdout
    assert counts == same_counts(result), stdout
