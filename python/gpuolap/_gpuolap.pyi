"""Type stubs of the extension gpuolap._gpuolap (python/src/module.cpp)."""

from typing import Optional, Union

class InputError(ValueError):
    """Bad input; the message names what is at fault."""

class ArrowBatch:
    """A record batch exported through the Arrow C data interface."""

    @property
    def array_address(self) -> int:
        """The address of its struct ArrowArray."""
    @property
    def schema_address(self) -> int:
        """The address of its struct ArrowSchema."""

class Cube:
    """A cube store opened read-write (holding its lock until closed)."""

    def __init__(self, path: str, engine: str = "auto") -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def schema(self) -> dict: ...
    @property
    def recovery_problem(self) -> str: ...
    @property
    def filled_cells(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def area(
        self, measure: str, area: dict[str, Union[str, list[str]]], aggregate: str, engine: str, max_cells: int
    ) -> ArrowBatch: ...
    def value(self, path: Union[str, list[str]], measure: str, aggregate: str) -> Union[float, int, None]: ...
    def write(
        self,
        paths: list[Union[str, list[str]]],
        values: list[Optional[float]],
        mode: str,
        measure: str,
        splash: str,
    ) -> dict: ...
    def save(self) -> None: ...
    def close(self) -> None: ...

def gpu_status() -> dict: ...

def sql(db: str, query: str, engine: str, max_rows: int) -> ArrowBatch:
    """Runs one SELECT over a database directory."""

def load_table(db: str, name: str, stream: object, sort_by: list[str], rows_hint: int = 0) -> dict:
    """Stores an Arrow stream (the PyCapsule of __arrow_c_stream__()) as a table of a database directory."""
