"""Token halting in the style of A-ViT (Yin et al. 2022): each token stops after its own number of blocks.

After block ``l`` a token's halting score is read off its first feature,
``h_l = σ(γ t_{l,0} + β)`` (γ = 5, β = −10 as in A-ViT), and accumulated; the token halts at the
first block ``N_t`` where ``Σ_{l ≤ N_t} h_l ≥ 1 − ε``. A halted token keeps its last state, is no
longer updated and is masked out as a key, so later blocks cost only the active tokens.
Two losses steer the depth (weights as the official baseline: 5e-4 and 1.0):

    ponder   ρ = mean_t (N_t + r_t),   r_t = 1 − Σ_{l < N_t} h_l         (ACT's ponder cost)
    prior    KL(h̄ ‖ 𝒩(target depth)),  h̄_l = mean over tokens of the halting mass at block l

The class token never halts (the fix of A-ViT issue #4 the ACM authors adopted; it is read by
the head). ``active_counts`` holds the active tokens per block of the last forward, ``[depth][B]``.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .vit import ViT


class AViT(nn.Module):
    """A :class:`ViT` whose tokens halt adaptively; ``forward`` returns logits."""

    def __init__(self, vit: ViT, scale: float = 5.0, shift: float = -10.0, eps: float = 0.01):
        super().__init__()
        self.vit, self.scale, self.shift, self.eps = vit, scale, shift, eps
        self.active_counts: list[torch.Tensor] = []
        self.ponder = self.halting_mass = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.vit.embed(x)
        batch, tokens, _ = h.shape
        depth = len(self.vit.blocks)
        active = torch.ones(batch, tokens, dtype=torch.bool, device=h.device)
        cumulative = h.new_zeros(batch, tokens)
        ponder = h.new_zeros(batch, tokens)
        mass = []
        self.active_counts = []
        for layer, block in enumerate(self.vit.blocks):
            self.active_counts.append(active.sum(-1))
            h = torch.where(active[..., None], block(h, key_padding=~active), h)
            score = (
                torch.sigmoid(self.scale * h[..., 0] + self.shift) if layer < depth - 1 else torch.ones_like(cumulative)
            )
            score = torch.cat(
                [score[:, :1] * (layer == depth - 1), score[:, 1:]], dim=1
            )  # the class token runs every block
            halts = active & (cumulative + score >= 1 - self.eps)
            ponder = ponder + active.float() + torch.where(halts, 1 - cumulative, torch.zeros_like(cumulative))
            mass.append(torch.where(halts, 1 - cumulative, score * active)[:, 1:].mean())
            cumulative = cumulative + score * active
            active = active & ~halts
        self.ponder = ponder[:, 1:].mean()
        self.halting_mass = torch.stack(mass)
        return self.vit.classify(h)

    def prior_loss(self, target_depth: float, width: float = 1.0) -> torch.Tensor:
        """``KL(h̄ ‖ prior)`` with a discretised Gaussian prior centred on block ``target_depth`` (1-based)."""
        depth = len(self.halting_mass)
        blocks = torch.arange(1, depth + 1, dtype=self.halting_mass.dtype, device=self.halting_mass.device)
        prior = torch.softmax(-0.5 * ((blocks - target_depth) / width) ** 2, dim=0)
        observed = self.halting_mass / self.halting_mass.sum().clamp_min(1e-9)
        return (observed * (observed.clamp_min(1e-9).log() - prior.log())).sum()


def halting_loss(
    model: AViT,
    x: torch.Tensor,
    y: torch.Tensor,
    target_depth: float,
    ponder_weight: float = 5e-4,
    prior_weight: float = 1.0,
) -> torch.Tensor:
    """CE + ponder cost + distributional prior."""
    task = F.cross_entropy(model(x), y)
    return task + ponder_weight * model.ponder + prior_weight * model.prior_loss(target_depth)
