"""Training shows a bar sized to what will really run, then a line saying why it stopped (no kernel)."""

import io

import pytest

from transformer_course.step_progress import (
    StepProgress,
    TextView,
    WidgetView,
    expected_final_step,
    status_text,
    stop_line,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class RecordingView:
    def __init__(self) -> None:
        self.shown: list[tuple[int, int, str]] = []
        self.finished: list[tuple[int, str, bool]] = []

    def show(self, step: int, final_step: int, text: str) -> None:
        self.shown.append((step, final_step, text))

    def finish(self, step: int, text: str, complete: bool) -> None:
        self.finished.append((step, text, complete))


def test_without_a_time_budget_the_run_ends_at_its_step_count():
    assert expected_final_step(step=10, target=1200, steps_run=10, elapsed_s=5.0, time_budget_s=None) == 1200


def test_a_time_budget_that_ends_the_run_first_sizes_the_bar_to_the_steps_that_fit():
    # 100 steps in 50 s: 2 steps a second; 190 s left of 240 s fits 380 more steps.
    assert expected_final_step(100, 1200, steps_run=100, elapsed_s=50.0, time_budget_s=240) == 480
    # A generous budget never makes the run longer than its step count.
    assert expected_final_step(100, 1200, steps_run=100, elapsed_s=50.0, time_budget_s=9999) == 1200
    # Past the budget the run ends where it is.
    assert expected_final_step(500, 1200, steps_run=500, elapsed_s=300.0, time_budget_s=240) == 500


def test_before_anything_is_measured_the_estimate_is_the_step_count():
    assert expected_final_step(step=0, target=800, steps_run=0, elapsed_s=0.0, time_budget_s=60) == 800


def test_the_status_gives_the_real_end_the_time_so_far_and_what_is_left():
    text = status_text("training", 100, 480, 1200, 50.0, 100, "loss 3.210")
    assert text == (
        "training: step 100 of 480 (of 1,200; the time limit ends it first), 0:50 so far, "
        "about 3:10 left; loss 3.210"
    )
    assert (
        status_text("training", 400, 800, 800, 100.0, 400)
        == "training: step 400 of 800, 1:40 so far, about 1:40 left"
    )


def test_the_stop_line_says_why_the_run_stopped():
    assert stop_line("training", 460, 1200, 240.3, 240, interrupted=False) == (
        "training: stopped at step 460 of 1,200 because the 240 s time limit was reached "
        "(time_budget_s in the settings; None trains every step)."
    )
    # Short of its steps but inside its time limit: no reason is made up.
    assert (
        stop_line("training", 300, 800, 95, 240, interrupted=False)
        == "training: stopped at step 300 of 800 after 1:35."
    )
    finished = stop_line("training", 800, 800, 95, None, interrupted=False)
    assert finished == "training: finished all 800 steps in 1:35."
    assert stop_line("training", 12, 800, 3, None, interrupted=True) == (
        "training: interrupted at step 12 of 800 after 0:03."
    )


def test_a_run_stopped_by_its_budget_shows_the_bar_shrinking_to_the_steps_that_fit_and_the_stop_line():
    clock, view = FakeClock(), RecordingView()
    progress = StepProgress("training", 1200, time_budget_s=240, view=view, clock_s=clock)
    for step in range(1, 461):
        clock.now = step * 0.5
        progress.advance(step, "loss 2.000")
    clock.now = 240.2  # the loop checks the budget before each step, and stops once it is spent
    progress.close()
    finals = [final for _, final, _ in view.shown]
    assert finals[-1] == 480 and max(finals) <= 1200
    assert view.finished == [
        (
            460,
            "training: stopped at step 460 of 1,200 because the 240 s time limit was reached "
            "(time_budget_s in the settings; None trains every step).",
            False,
        )
    ]


def test_a_resumed_run_measures_its_rate_from_the_steps_it_ran_itself():
    clock, view = FakeClock(), RecordingView()
    progress = StepProgress("training", 1000, start_step=500, time_budget_s=100, view=view, clock_s=clock)
    clock.now = 10.0
    progress.advance(520)  # 20 steps in 10 s: 180 more fit in the 90 s left
    assert view.shown[-1][:2] == (520, 700)


def test_an_error_inside_the_loop_ends_with_an_interrupted_line():
    view = RecordingView()
    progress = StepProgress("training", 10, view=view, clock_s=FakeClock())
    progress.advance(3)
    progress.close(interrupted=True)
    assert view.finished[0][1].startswith("training: interrupted at step 3 of 10") and not view.finished[0][2]


def test_disabled_progress_shows_nothing(capsys: pytest.CaptureFixture[str]):
    progress = StepProgress("training", 10, enabled=False)
    progress.advance(10)
    progress.close()
    assert capsys.readouterr() == ("", "")


def test_text_lines_come_at_most_every_few_seconds_so_a_log_never_floods():
    stream, clock = io.StringIO(), FakeClock()
    view = TextView(stream, every_s=15.0, clock_s=clock)
    progress = StepProgress("training", 600, view=view, clock_s=clock)
    for step in range(1, 601):
        clock.now = step * 0.1
        progress.advance(step)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert 4 <= len(lines) <= 6, lines
    assert lines[-1] == "training: finished all 600 steps in 1:00."


def test_the_widget_bar_is_sized_to_the_real_end_and_fills_at_the_stop(capsys: pytest.CaptureFixture[str]):
    clock = FakeClock()
    view = WidgetView(every_s=0.0, clock_s=clock)
    progress = StepProgress("training", 1200, time_budget_s=240, view=view, clock_s=clock)
    clock.now = 50.0
    progress.advance(100)
    assert (view.bar.value, view.bar.max) == (100, 480)
    assert "step 100 of 480" in view.label.value
    clock.now = 240.0
    progress.advance(460)
    progress.close()
    assert (view.bar.value, view.bar.max, view.bar.bar_style) == (460, 460, "warning")
    assert "time limit was reached" in view.label.value
    assert "stopped at step 460 of 1,200" in capsys.readouterr().out


def test_the_widget_bar_turns_green_when_every_step_ran():
    clock = FakeClock()
    view = WidgetView(every_s=0.0, clock_s=clock)
    progress = StepProgress("training", 5, view=view, clock_s=clock)
    for step in range(1, 6):
        progress.advance(step)
    progress.close()
    assert (view.bar.value, view.bar.max, view.bar.bar_style) == (5, 5, "success")


def test_other_units_are_named_in_every_line():
    view = RecordingView()
    progress = StepProgress("beam decoding", 40, view=view, clock_s=FakeClock(), unit="sentence")
    progress.advance(8)
    progress.advance(40)
    progress.close()
    assert view.shown[0][2].startswith("beam decoding: sentence 8 of 40")
    assert view.finished[0][1] == "beam decoding: finished all 40 sentences in 0:00."


def test_a_loop_that_ends_early_for_its_own_reason_says_so():
    view = RecordingView()
    progress = StepProgress("beam decoding", 90, view=view, clock_s=FakeClock(), unit="token")
    progress.advance(57, "40 of 40 sentences ended")
    progress.close(reason="every sentence ended")
    assert view.finished == [
        (
            57,
            "beam decoding: stopped at token 57 of at most 90 because every sentence ended, after 0:00.",
            True,
        )
    ]
