"""gpuolap: an in-memory OLAP engine from Python.

``sql(db_path, query)`` runs SQL over a database directory of tables and
answers a pyarrow Table. Bad input raises
``InputError`` (a ValueError) with the message the command ``gpuolap``
would print. This build is CPU-only.
"""

from ._gpuolap import InputError
from .sql import sql

__all__ = ["InputError", "sql"]
__version__ = "0.1.0"
