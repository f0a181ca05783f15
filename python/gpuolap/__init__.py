"""gpuolap: an in-memory OLAP engine from Python.

``Cube(path)`` opens a cube store for area queries (answered as pyarrow
Tables or pandas DataFrames), cell reads and writes; ``sql(db_path, query)``
runs SQL over a database directory of tables; ``load_table(db_path, name,
data)`` stores a pandas DataFrame, an Arrow table or a Parquet file as one
of its tables; ``HTree`` builds, feeds and queries H-tree partial cubes. Bad input raises
``InputError`` (a ValueError) with the message the command ``gpuolap``
would print. This build is CPU-only.
"""

from ._gpuolap import InputError
from .cube import Cube
from .htree import HTree
from .sql import sql
from .tables import load_table

__all__ = ["Cube", "HTree", "InputError", "load_table", "sql"]
__version__ = "0.1.0"
