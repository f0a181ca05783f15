"""gpuolap: an in-memory OLAP engine from Python.

``Cube(path)`` opens a cube store for area queries (answered as pyarrow
Tables or pandas DataFrames), cell reads and writes; ``sql(db_path, query)``
runs SQL over a database directory of tables. Bad input raises
``InputError`` (a ValueError) with the message the command ``gpuolap``
would print. This build is CPU-only.
"""

from ._gpuolap import InputError
from .cube import Cube
from .sql import sql

__all__ = ["Cube", "InputError", "sql"]
__version__ = "0.1.0"
