"""What the second cell of every notebook calls: check the profile, seed, set the plot theme."""
import torch

from .plots import set_theme
from .profiles import check_profile
from .training import default_device, seed_everything


def setup(profile: str, seed: int) -> torch.device:
    """Validate ``profile``, seed python/numpy/torch with ``seed``, apply the theme; return the device."""
    check_profile(profile)
    seed_everything(seed)
    set_theme()
    return default_device()
