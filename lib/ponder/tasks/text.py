"""A language-modelling corpus available offline: the reference documentation torch ships.

Stand-in for C4 (HYLA paper, Fig. 6). torch ships the reference documentation of its functions as
one source file, ``torch/_torch_docs.py``; that of ``torch==2.13.0`` (the pinned torch of
``pyproject.toml``) is 439 kB of English prose, signatures and code examples, held together by the
Python calls that attach them as docstrings. ponder ships those bytes itself (:data:`CORPUS`,
xz-compressed, with torch's BSD licence beside it), so the corpus is the same whatever torch is
installed: another torch ships another file (torch 2.11's is 435,639 bytes), and a GPU machine's torch
may be another release. It does not depend on the Python version either, as CPython's ``pydoc_data.topics``
would (it changes with every Python release). Modelled at the byte level (vocabulary 256). The last
``valid_fraction`` of the bytes is the validation split. :data:`SHA256` pins the bytes, and
``tests/test_hyla.py`` checks the pin.
"""

import hashlib
import lzma
from importlib import resources

import numpy as np
import torch

from ..checks import check_int

VOCAB = 256
CORPUS = "torch_docs.xz"  # beside this module: torch 2.13.0's torch/_torch_docs.py, xz-compressed
SHA256 = "38bd167709f8998348da6aaa926b3af3cf2d6e8eb525ac3026d58a256ade1b90"  # of the decompressed bytes


def corpus() -> bytes:
    """torch 2.13.0's reference documentation (the bytes of ``torch/_torch_docs.py``, ASCII), from
    :data:`CORPUS`; raises ``ValueError`` if they are not the pinned ones (a damaged checkout)."""
    data = lzma.decompress((resources.files(__package__) / CORPUS).read_bytes())
    if hashlib.sha256(data).hexdigest() != SHA256:
        raise ValueError(f"{CORPUS} does not hold the pinned corpus (sha256 {SHA256}): restore it from git")
    return data


def splits(valid_fraction: float = 0.1) -> dict[str, torch.Tensor]:
    """``{"train": LongTensor, "valid": LongTensor}`` of byte ids."""
    if not 0 < valid_fraction < 1:
        raise ValueError(f"valid_fraction={valid_fraction} must lie in (0, 1)")
    data = torch.as_tensor(np.frombuffer(corpus(), dtype=np.uint8).astype(np.int64))
    cut = int(len(data) * (1 - valid_fraction))
    return {"train": data[:cut], "valid": data[cut:]}


def windows(data: torch.Tensor, n: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` random windows: ``(input [n, length], next-byte target [n, length])``."""
    check_int("length", length, minimum=1, maximum=len(data) - 1)
    start = torch.randint(len(data) - length, (n,), generator=torch.Generator().manual_seed(seed))
    index = start[:, None] + torch.arange(length + 1)
    chunk = data[index]
    return chunk[:, :-1], chunk[:, 1:]
