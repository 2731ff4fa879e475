"""What the second cell of every notebook calls: check the profile, seed, set the plot theme."""

import torch

from ..checks import check_int
from ..plots import set_theme
from ..profiles import check_profile
from ..runner.training import default_device, seed_everything


def setup(profile: str, seed: int) -> torch.device:
    """Validate ``profile`` and ``seed``, seed python/numpy/torch with it, apply the theme; return the device.

    ``seed`` is an int in ``[0, 2**32 - 1]`` (numpy's range), not a bool or a string.
    """
    check_profile(profile)
    seed_everything(check_int("seed", seed, minimum=0, maximum=2**32 - 1))
    set_theme()
    return default_device()
