"""The notebooks' kernels (papermill's and nbval's) talk over Unix sockets of their own."""
import glob
import json
import os
import tempfile

import nbformat
import nbval.kernel
import pytest

from ponder import kernels, notebooks

pytestmark = pytest.mark.skipif(not kernels.LOCAL_SOCKETS, reason="Unix sockets: POSIX only")


def test_each_kernel_manager_has_sockets_of_its_own_and_removes_them():
    first, second = kernels.SocketKernelManager(kernel_name="python3"), kernels.AsyncSocketKernelManager(kernel_name="python3")
    assert first.transport == second.transport == "ipc"
    assert first.ip != second.ip and os.path.dirname(first.ip) == os.path.dirname(second.ip) == tempfile.gettempdir()
    first.start_kernel()
    client = first.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        assert client.execute_interactive("1 + 1", timeout=60)["content"]["status"] == "ok"
        assert len(glob.glob(first.ip + "-*")) == 5  # shell, iopub, stdin, control, heartbeat
    finally:
        client.stop_channels()
        first.shutdown_kernel()
    assert glob.glob(first.ip + "-*") == []


def test_papermill_and_nbval_start_their_kernels_over_unix_sockets(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("import json, ipykernel\nprint(json.loads(ipykernel.get_connection_info())['transport'])")]
    nbformat.write(nb, tmp_path / "k.ipynb")
    notebooks.papermill_execute(tmp_path / "k.ipynb", tmp_path / "out.ipynb")
    assert nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs[0]["text"].strip() == "ipc"
    assert nbval.kernel.KernelManager is kernels.SocketKernelManager  # the repository's conftest.py
