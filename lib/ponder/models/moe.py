"""MoEfication (Zhang et al. 2022): a trained MLP split into experts with a learned top-k router.

1. *ReLU-fication*: the MLP's GELU becomes a ReLU and the model is fine-tuned, so that most
   hidden units are exactly zero for a given token.
2. *Expert split*: the ``H`` hidden units are grouped into ``E`` experts of ``H/E`` units by
   balanced k-means on the L2-normalised rows of ``W1`` (units that fire together share an expert).
3. *Router*: ``Linear(d, E) -> tanh -> Linear(E, E)`` (no biases) trained with binary
   cross-entropy towards each expert's activation norm divided by the largest one.
4. Inference runs the ``k`` best-scored experts of each token:

       y = W2[:, S] ReLU(W1[S] z + b1[S]) + b2,     S = units of the top-k experts of z

Only the MLPs get cheaper; the attention projections stay dense.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..checks import check_int
from .transformer import MLP


class MoE(nn.Module):
    """``[..., d] -> [..., d]``: a ReLU MLP whose hidden units form ``experts`` contiguous groups."""

    def __init__(self, mlp: MLP, experts: int):
        super().__init__()
        hidden = mlp.fc1.out_features
        check_int("experts", experts, minimum=1, maximum=hidden)
        if hidden % experts:
            raise ValueError(f"the MLP width {hidden} must be divisible by experts={experts}")
        self.fc1, self.fc2 = mlp.fc1, mlp.fc2
        self.experts, self.size = experts, hidden // experts
        dim = self.fc1.in_features
        self.router = nn.Sequential(
            nn.Linear(dim, experts, bias=False), nn.Tanh(), nn.Linear(experts, experts, bias=False)
        )
        self.top_k: int | None = None  # None: every expert (the dense ReLU MLP)
        self.k = None

    def expert_norms(self, z: torch.Tensor) -> torch.Tensor:
        """``[..., E]``: the L2 norm of each expert's ReLU activations (the router's target)."""
        return F.relu(self.fc1(z)).unflatten(-1, (self.experts, self.size)).norm(dim=-1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        hidden = F.relu(self.fc1(z))
        if self.top_k is None or self.top_k >= self.experts:
            self.k = torch.full(z.shape[:-1], self.experts, device=z.device)
            return self.fc2(hidden)
        chosen = self.router(z).topk(self.top_k, dim=-1).indices
        mask = torch.zeros(*z.shape[:-1], self.experts, device=z.device).scatter_(-1, chosen, 1.0)
        self.k = torch.full(z.shape[:-1], self.top_k, device=z.device)
        return self.fc2((hidden.unflatten(-1, (self.experts, self.size)) * mask.unsqueeze(-1)).flatten(-2))

    def macs(self) -> torch.Tensor:
        """Per token ``[...]``: ``k`` experts (``2 d H/E`` each) plus the router (none when dense)."""
        dim = self.fc1.in_features
        router = 0 if self.top_k is None or self.top_k >= self.experts else dim * self.experts + self.experts**2
        return router + self.k * 2 * dim * self.size


def balanced_kmeans(rows: np.ndarray, clusters: int, iterations: int = 20, seed: int = 0) -> np.ndarray:
    """Assign ``rows [H, d]`` to ``clusters`` groups of exactly ``H / clusters`` (greedy balanced k-means)."""
    rng = np.random.default_rng(seed)
    size = len(rows) // clusters
    centres = rows[rng.choice(len(rows), clusters, replace=False)]
    for _ in range(iterations):
        distance = ((rows[:, None] - centres[None]) ** 2).sum(-1)  # [H, clusters]
        assign, load = np.full(len(rows), -1), np.zeros(clusters, dtype=int)
        for flat in np.argsort(distance, axis=None):  # closest pairs first, respecting capacity
            row, cluster = divmod(int(flat), clusters)
            if assign[row] < 0 and load[cluster] < size:
                assign[row], load[cluster] = cluster, load[cluster] + 1
        centres = np.stack([rows[assign == c].mean(0) for c in range(clusters)])
    return assign


def split_experts(moe: MoE, seed: int = 0) -> None:
    """Permute ``moe``'s hidden units in place so that each balanced k-means cluster is one contiguous expert."""
    w1 = moe.fc1.weight.detach()
    rows = F.normalize(w1, dim=1).cpu().numpy()
    order = torch.as_tensor(np.argsort(balanced_kmeans(rows, moe.experts, seed=seed), kind="stable"), device=w1.device)
    with torch.no_grad():
        moe.fc1.weight.copy_(moe.fc1.weight[order])
        moe.fc1.bias.copy_(moe.fc1.bias[order])
        moe.fc2.weight.copy_(moe.fc2.weight[:, order])


def moefy(model: nn.Module, experts: int) -> nn.Module:
    """Replace every ``block.mlp`` of ``model`` (in place) by a dense :class:`MoE` (step 1: ReLU)."""
    for block in model.blocks:
        block.mlp = MoE(block.mlp, experts)
    return model


def moe_layers(model: nn.Module) -> list[MoE]:
    return [m for m in model.modules() if isinstance(m, MoE)]


def set_top_k(model: nn.Module, k: int | None) -> None:
    for m in moe_layers(model):
        m.top_k = k


def router_loss(model: nn.Module, inputs: dict) -> torch.Tensor:
    """BCE of each router's scores against expert norms / their max, on the MLP inputs ``{MoE: z}``."""
    losses = []
    for moe, z in inputs.items():
        with torch.no_grad():
            norms = moe.expert_norms(z)
            target = norms / norms.amax(-1, keepdim=True).clamp_min(1e-6)
        losses.append(F.binary_cross_entropy_with_logits(moe.router(z), target))
    return torch.stack(losses).mean()
