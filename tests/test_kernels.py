"""The notebooks' kernels (papermill's and nbval's) talk over Unix sockets of their own."""

import contextlib
import glob
import os
import subprocess
import sys
import tempfile

import nbval.kernel
import pytest
from jupyter_client import KernelManager

from ponder.repro import kernels

pytestmark = pytest.mark.skipif(not kernels.LOCAL_SOCKETS, reason="Unix sockets: POSIX only")


@contextlib.contextmanager
def running(km):
    """A ready client of ``km``'s kernel, started here and shut down on the way out."""
    km.start_kernel()
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel()


def test_each_kernel_manager_has_sockets_of_its_own_and_removes_them():
    first, second = (
        kernels.SocketKernelManager(kernel_name="python3"),
        kernels.AsyncSocketKernelManager(kernel_name="python3"),
    )
    assert first.transport == second.transport == "ipc"
    assert first.ip != second.ip and os.path.dirname(first.ip) == os.path.dirname(second.ip) == tempfile.gettempdir()
    with running(first) as client:
        assert client.execute_interactive("1 + 1", timeout=60)["content"]["status"] == "ok"
        assert len(glob.glob(first.ip + "-*")) == 5  # shell, iopub, stdin, control, heartbeat
    assert glob.glob(first.ip + "-*") == []


def test_papermill_and_nbval_start_their_kernels_over_unix_sockets(run_one_cell):
    outputs = run_one_cell("import json, ipykernel\nprint(json.loads(ipykernel.get_connection_info())['transport'])")
    assert outputs[0]["text"].strip() == "ipc"
    assert nbval.kernel.KernelManager is kernels.SocketKernelManager  # the repository's conftest.py


def test_a_temporary_folder_too_long_for_a_socket_address_keeps_tcp(tmp_path):
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    show = "from ponder.repro import kernels; print(kernels.LOCAL_SOCKETS, kernels.SocketKernelManager().transport)"
    done = subprocess.run(
        [sys.executable, "-c", show],
        env={**os.environ, "TMPDIR": str(deep)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["False", "tcp"]


# in the kernel: the SIGINT handler it restores after each request (so the one it has when idle)
# writes a file; ipykernel's own ignores the signal when idle
NOTE_SIGINT = "import pathlib\nget_ipython().kernel.saved_sigint_handler = lambda *_: pathlib.Path({!r}).touch()"


@pytest.mark.parametrize("manager, interrupted", [(KernelManager, True), (kernels.SocketKernelManager, False)])
def test_a_kernel_is_shut_down_without_an_interrupt(tmp_path, manager, interrupted):
    # jupyter_client's own manager interrupts first: the check can tell
    with running(manager(kernel_name="python3")) as client:
        assert (
            client.execute_interactive(NOTE_SIGINT.format(str(tmp_path / "sigint")), timeout=60)["content"]["status"]
            == "ok"
        )
    assert (tmp_path / "sigint").exists() == interrupted


def test_papermill_shuts_its_kernel_down_without_an_interrupt(tmp_path, run_one_cell):
    run_one_cell(NOTE_SIGINT.format(str(tmp_path / "sigint")))
    assert not (tmp_path / "sigint").exists()
