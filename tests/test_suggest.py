"""The "did you mean" suggestion of the one-line errors."""

from __future__ import annotations

from kernelmaps._suggest import did_you_mean


def test_close_name_is_suggested() -> None:
    assert did_you_mean("uspss", ["usps", "letter", "mnist"]) == " Did you mean 'usps'?"


def test_case_only_difference_wins() -> None:
    assert did_you_mean("label", ["Label", "labels"]) == " Did you mean 'Label'?"


def test_case_insensitive_closeness() -> None:
    assert did_you_mean("TARGETS", ["target", "x0"]) == " Did you mean 'target'?"


def test_nothing_close_gives_empty_text() -> None:
    assert did_you_mean("zzz", ["usps", "letter"]) == ""
    assert did_you_mean("usps", []) == ""
