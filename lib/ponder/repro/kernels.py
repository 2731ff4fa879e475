"""Jupyter kernels that talk over Unix sockets, each at a path of its own, instead of TCP ports.

A kernel manager picks "free" TCP ports by binding port 0 and letting go of it; the kernel binds
them a moment later. In between, another process starting a kernel (the pytest-xdist workers of
``make test``, ``--jobs`` of ``make figures``) or any local connection's ephemeral port can take
one, and the kernel dies with ``Address already in use`` before it replies to ``kernel_info``.
A Unix socket under a fresh random prefix has nothing to race for.

papermill takes :class:`AsyncSocketKernelManager` (``kernel_manager_class``); nbval's kernels
are :class:`SocketKernelManager`, set by the repository's ``conftest.py``. Elsewhere than POSIX
(no Unix sockets), or where the temporary folder's path is too long for a socket's address
(about 100 bytes on Linux and macOS), both keep TCP.

Both also shut a kernel down without interrupting it first (:class:`NoInterruptAtShutdown`).
"""

import os
import tempfile
import uuid

from jupyter_client import AsyncKernelManager, KernelManager
from traitlets import default

NAME, RANDOM_HEX = "ponder-kernel-", 16
SOCKET_PATH = os.fsencode(os.path.join(tempfile.gettempdir(), NAME + "0" * RANDOM_HEX + "-5"))  # the longest
LOCAL_SOCKETS = os.name == "posix" and len(SOCKET_PATH) <= 100


class UnixSockets:
    """The transport and address of a kernel manager: ``ipc`` at ``<tmp>/ponder-kernel-<random>``.

    jupyter_client numbers a kernel's five channels ``<prefix>-1`` ... ``-5`` and removes the
    sockets when the kernel shuts down; a random prefix per manager keeps concurrent kernels apart.
    """

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc" if LOCAL_SOCKETS else "tcp"

    @default("ip")
    def _ip_default(self) -> str:  # jupyter_client also calls it by this name
        if self.transport != "ipc":
            return super()._ip_default()
        return os.path.join(tempfile.gettempdir(), NAME + uuid.uuid4().hex[:RANDOM_HEX])


class NoInterruptAtShutdown:
    """An orderly shutdown without the SIGINT that jupyter_client sends first.

    jupyter_client interrupts a kernel before asking it to shut down. When the signal lands while
    the kernel still handles the last cell's request, after its reply, the kernel logs
    ``ERROR | KeyboardInterrupt caught in kernel.``: harmless, but one or two of these stood in
    each ``make figures``. The shutdown request alone stops an idle kernel; one still busy is
    killed after ``shutdown_wait_time``, as before.
    """

    async def _async_interrupt_kernel(self) -> None:
        if not self.shutting_down:
            await super()._async_interrupt_kernel()


class SocketKernelManager(NoInterruptAtShutdown, UnixSockets, KernelManager):
    """A blocking kernel manager (nbval's) over Unix sockets."""


class AsyncSocketKernelManager(NoInterruptAtShutdown, UnixSockets, AsyncKernelManager):
    """An asyncio kernel manager (nbclient's, so papermill's) over Unix sockets."""
