"""For every pytest run of the repository (unit tests and nbval over the notebooks): pin the
numerics first, start nbval's kernels over Unix sockets, and skip the notebooks' checked number
cells where they are not promised."""

import nbval.kernel

import ponder  # noqa: F401  (first: pins the numerics before anything imports torch)
from ponder.repro.kernels import SocketKernelManager

# nbval starts each notebook's kernel with the KernelManager its module imported: over TCP, the
# xdist workers' kernels could race for a port (ponder.repro.kernels)
nbval.kernel.KernelManager = SocketKernelManager

pytest_plugins = ("ponder.repro.regression",)
