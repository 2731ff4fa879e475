"""A language-modelling corpus available offline: Python's own bundled documentation.

Stand-in for C4 (HYLA paper, Fig. 6). CPython ships the text of its reference documentation's
topics (``pydoc_data.topics``, about 0.5 MB of English prose and code examples) for ``help()``;
it needs no download. Modelled at the byte level (vocabulary 256). The last ``valid_fraction``
of the bytes is the validation split.
"""
import numpy as np
import torch

from ..checks import check_int

VOCAB = 256


def corpus() -> bytes:
    """The documentation topics, in a fixed (sorted) order, UTF-8 encoded."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name] for name in sorted(topics)).encode("utf-8")


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
