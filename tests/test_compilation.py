"""``ponder.runner.gpu.compilation``: the compiled loss hands inductor the option that sums small batched products.

On the CPU inductor's pass takes single products only (on CUDA, HYLA's value contractions: the CUDA
test ``test_compiled_sraven_loss_sums_its_small_products_and_equals_eager_on_cuda``), which is
enough to see the option reach it.
"""

import pytest
import torch
from torch._dynamo.utils import counters

from ponder.runner.gpu.compilation import compiled


@pytest.mark.parametrize("sums", [True, False])
def test_the_compiled_function_sums_small_products_only_when_asked(sums):
    a, b = torch.randn(1, 36, 16), torch.randn(1, 16, 4)
    torch._dynamo.reset()
    counters.clear()
    out = compiled(lambda x, y: torch.bmm(x, y).relu().sum(), sum_small_products=sums)(a, b)
    assert counters["inductor"]["decompose_bmm"] == int(sums)
    assert out.item() == pytest.approx(torch.bmm(a, b).relu().sum().item(), rel=1e-5)
