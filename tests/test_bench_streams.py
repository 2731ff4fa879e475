"""The streams benchmark times drawing C-PVR batches against reading them back, beside a training step."""

from ponder.bench import streams


def test_measure_reports_the_ratios_and_leaves_the_data_cache_alone(isolated_outputs):
    result = streams.measure(repeats=2)
    assert (
        0 < result["read / draw"]
        and 0 < result["gpu-size draw / draw"]
        and 0 < result["draw / ut_act step"]
        and 0 < result["draw / transformer step"]
    )
    assert result["drawing a chunk into the cache, s"] > 0 and result["reading a chunk back from disk, s"] > 0
    assert not (isolated_outputs / "datasets").exists()  # the benchmark drew its chunk into a folder of its own
