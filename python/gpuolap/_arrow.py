"""Record batches from the extension (the Arrow C data interface) into pyarrow."""

from __future__ import annotations

import pyarrow as pa

from . import _gpuolap


def to_table(batch: _gpuolap.ArrowBatch) -> pa.Table:
    """Moves an exported batch into pyarrow (no copy) and returns it as a one-batch Table."""
    record_batch = pa.RecordBatch._import_from_c(batch.array_address, batch.schema_address)
    return pa.Table.from_batches([record_batch])
