"""Job state as data (issue 10): the window decides on the phase; the words are derived."""

from tfrview.gui.job_state import JobState, Phase


def test_a_job_runs_then_ends_done_failed_or_stopped():
    s = JobState()
    assert s.phase is Phase.IDLE and s.text("QA checks") == ""
    s = s.started()
    assert s.running and s.text("QA checks") == "QA checks: starting"
    s = s.progressed("analysis", 3, 12)
    assert s.text("QA checks") == "QA checks: analysis 25%"
    assert s.finished().phase is Phase.STOPPED  # the process ended without saying it was done
    assert s.failed("boom").finished().text("QA checks") == "QA checks failed: boom"
    done = JobState(Phase.DONE)
    assert done.finished() is done and done.text("QA checks") == "QA checks done"


def test_the_analysis_counted_in_records_says_how_many():
    s = JobState().started().progressed("records", 250_000, 2_000_000)
    assert s.text("QA checks") == "QA checks: 12% of 2,000,000 records"
    assert s.progressed("records", 0, 2_000_000).text("QA checks") == "QA checks: 0% of 2,000,000 records"
