"""Type stubs of the extension gpuolap._gpuolap (python/src/module.cpp)."""

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

def sql(db: str, query: str, engine: str, max_rows: int) -> ArrowBatch:
    """Runs one SELECT over a database directory."""
