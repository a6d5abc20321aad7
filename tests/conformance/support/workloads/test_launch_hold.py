"""The launch hold's rule (support/workloads/launch_hold.py): a late repetition is timed again behind a hold twice
as long; a workload late behind the longest hold is timed unheld, and its note says so."""

from __future__ import annotations

import pytest

from conformance.support.workloads.launch_hold import FIRST_HOLD_MS, LaunchHold, hold_cycles


def test_a_repetition_in_time_is_recorded_behind_the_first_hold() -> None:
    hold = LaunchHold()
    assert hold.after(False) is False
    assert (hold.hold_ms, hold.late, hold.active) == (FIRST_HOLD_MS, 0, True)
    assert hold.note() == "held behind a 0.05 ms spin while the launch was enqueued"


def test_a_late_repetition_is_timed_again_behind_a_hold_twice_as_long_until_in_time() -> None:
    hold = LaunchHold(hold_ms=0.05)
    assert [hold.after(True), hold.after(True), hold.after(False)] == [True, True, False]
    assert hold.hold_ms == pytest.approx(0.2)
    assert hold.late == 2
    assert hold.after(False) is False  # the next repetitions keep the hold that was long enough
    assert hold.hold_ms == pytest.approx(0.2)
    assert "0.2 ms spin" in hold.note()
    assert "2 late repetition(s) timed again" in hold.note()


def test_a_workload_that_waits_for_the_gpu_is_timed_unheld_and_says_so() -> None:
    hold = LaunchHold(hold_ms=16.0, most_ms=64.0)
    assert [hold.after(True), hold.after(True), hold.after(True)] == [True, True, False]
    assert hold.given_up
    assert not hold.active
    assert hold.after(True) is False  # no more retries: the hold no longer runs
    assert "not held" in hold.note()
    assert "include the launch" in hold.note()


def test_the_spin_is_the_hold_in_cycles_of_the_measured_clock() -> None:
    assert hold_cycles(0.5, 1_980_000.0) == 990_000
    assert hold_cycles(1e-9, 1_980_000.0) == 1
