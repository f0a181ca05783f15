"""gpuolap: an in-memory OLAP engine from Python.

``Cube(path)`` opens a cube store for area queries (answered as pyarrow
Tables or pandas DataFrames), cell reads and writes; ``sql(db_path, query)``
runs SQL over a database directory of tables; ``load_table(db_path, name,
data)`` stores a pandas DataFrame, an Arrow table or a Parquet file as one
of its tables; ``HTree`` builds, feeds and queries H-tree partial cubes. Bad input raises
``InputError`` (a ValueError) with the message the command ``gpuolap``
would print. ``gpu_status()`` says whether the ``gpu`` engines can run here:
``pip install .`` builds them where CUDA's compiler is found.
"""

from . import _gpuolap
from ._gpuolap import InputError
from .cube import Cube
from .htree import HTree
from .sql import sql
from .tables import load_table



def gpu_status() -> dict:
    """What the ``gpu`` engines have here, as a dict:

    - ``cuda_build``: this module was built with CUDA (``pip install .`` does
      so where it finds ``nvcc``; ``-C cmake.define.GPUOLAP_CUDA=OFF`` leaves
      it out);
    - ``devices``: the GPUs it can use (0 without a GPU or a working driver);
    - ``device_name``: the first one's name;
    - ``problem``: why there is none, in words.

    With no device, an engine named ``gpu`` raises InputError saying why,
    and ``auto`` runs on the CPU.
    """
    return dict(_gpuolap.gpu_status())


__all__ = ["Cube", "HTree", "InputError", "gpu_status", "load_table", "sql"]
__version__ = "0.1.0"
