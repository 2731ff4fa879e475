"""ponder: a runnable companion to three papers on adaptive computation in transformers.

The library is thin on purpose: tasks (data), models (nn modules), one training loop, a run
cache, plot helpers and the claims ledger. Notebooks in ``notebooks/`` call into it.
"""

import os

from . import numerics

# Nothing in this project may reach the Hugging Face Hub: data sets are generated locally.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# MKL branch, ATen and oneDNN instruction sets, one thread: before anything imports torch; then, where
# pinned, the float32 CPU products through numpy's OpenBLAS (ponder.products, which loads torch)
numerics.pin()

from . import products  # noqa: E402  (after the pins)

if numerics.pinned():
    products.route()

__version__ = "0.1.0"
