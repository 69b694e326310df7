"""Read a PyTorch checkpoint in the legacy (pre-1.6, non-zip) format without torch.

Resemblyzer's ``pretrained.pt`` is such a file. It is five pickles in a row, then raw
data:

1. the magic number ``0x1950A86A20F9469CFC6C``;
2. the protocol version (1001);
3. system info (byte order, sizes of short/int/long);
4. the object itself (here a dict holding ``model_state``). Each tensor is pickled as
   ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` and each
   storage as a *persistent id* ``("storage", StorageClass, key, location, numel,
   view)``: the pickle names the storage, the bytes come later;
5. the list of storage keys, in the order their bytes follow;

then, per key, a little-endian int64 element count and that many elements.

The unpickler below accepts only the handful of globals a checkpoint of plain tensors
needs (an ordered dict, the tensor rebuild function, storage classes), so loading a
file can never run code: pickle's ``find_class`` refuses anything else.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
import pickle
from typing import IO, Any

import numpy as np

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001

_STORAGE_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class CheckpointError(ValueError):
    """The file is not a legacy PyTorch checkpoint of plain tensors."""


@dataclass(frozen=True)
class _StorageType:
    dtype: np.dtype[Any]


@dataclass(frozen=True)
class _Storage:
    key: str
    dtype: np.dtype[Any]
    numel: int


@dataclass(frozen=True)
class _LazyTensor:
    """A tensor whose storage bytes have not been read yet."""

    storage: _Storage
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]

    def materialize(self, data: np.ndarray) -> np.ndarray:
        """Cut this tensor out of its storage's elements (a copy, C-contiguous)."""
        end = self.offset + sum(
            (n - 1) * s for n, s in zip(self.size, self.stride, strict=True)
        )
        if self.size and min(self.size) > 0 and end >= len(data):
            raise CheckpointError(f"tensor overruns storage {self.storage.key}")
        view = np.lib.stride_tricks.as_strided(
            data[self.offset :],
            shape=self.size,
            strides=tuple(s * data.itemsize for s in self.stride),
        )
        return np.array(view)


def _rebuild_tensor_v2(
    storage: _Storage,
    offset: int,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    *_: Any,
) -> _LazyTensor:
    """Stand-in for ``torch._utils._rebuild_tensor_v2`` (extra args: grad, hooks)."""
    return _LazyTensor(storage, offset, tuple(size), tuple(stride))


def _rebuild_parameter(tensor: _LazyTensor, *_: Any) -> _LazyTensor:
    """Stand-in for ``torch._utils._rebuild_parameter``: a parameter is its tensor."""
    return tensor


class _Unpickler(pickle.Unpickler):
    """Resolves storages to placeholders and refuses every other global."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return _rebuild_parameter
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(np.dtype(_STORAGE_DTYPES[name]))
        raise CheckpointError(
            f"checkpoint needs {module}.{name}, which is not a tensor"
        )

    def persistent_load(self, pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise CheckpointError(f"unexpected persistent id {pid!r}")
        storage_type, key, _location, numel = pid[1:5]
        if not isinstance(storage_type, _StorageType):
            raise CheckpointError(f"storage {key} has no known element type")
        return _Storage(str(key), storage_type.dtype, int(numel))


def read_legacy_checkpoint(path: Path) -> dict[str, Any]:
    """Load a legacy checkpoint; every tensor becomes a numpy array.

    Raises ``CheckpointError`` for a file in another format (the zip format of
    torch >= 1.6 included) and ``OSError`` when it cannot be read.
    """
    with path.open("rb") as file:
        if _load(file) != MAGIC_NUMBER:
            raise CheckpointError(f"{path} is not a legacy PyTorch checkpoint")
        if _load(file) != PROTOCOL_VERSION:
            raise CheckpointError(f"{path}: unsupported checkpoint protocol")
        sys_info = _load(file)
        if not isinstance(sys_info, dict) or not sys_info.get("little_endian", False):
            raise CheckpointError(
                f"{path}: only little-endian checkpoints are supported"
            )
        tensors: list[_LazyTensor] = []
        root = _load(file, tensors)
        keys = _load(file)
        storages = _read_storages(
            file, keys, {t.storage.key: t.storage for t in tensors}
        )
    state: dict[str, Any] = _replace_tensors(root, storages)  # a state dict
    return state


def _load(file: IO[bytes], tensors: list[_LazyTensor] | None = None) -> Any:
    """Unpickle one object; collect the lazy tensors it contains into ``tensors``."""
    try:
        obj = _Unpickler(file).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as err:
        if isinstance(err, CheckpointError):
            raise
        raise CheckpointError(f"unreadable checkpoint: {err}") from err
    if tensors is not None:
        _collect(obj, tensors)
    return obj


def _collect(obj: Any, tensors: list[_LazyTensor]) -> None:
    if isinstance(obj, _LazyTensor):
        tensors.append(obj)
    elif isinstance(obj, dict):
        for value in obj.values():
            _collect(value, tensors)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            _collect(value, tensors)


def _read_storages(
    file: IO[bytes], keys: Any, known: dict[str, _Storage]
) -> dict[str, np.ndarray]:
    """Read each storage's elements in file order (count first, as int64)."""
    if not isinstance(keys, list):
        raise CheckpointError("checkpoint has no storage key list")
    storages: dict[str, np.ndarray] = {}
    for key in keys:
        storage = known.get(str(key))
        if storage is None:
            raise CheckpointError(f"storage {key} is listed but no tensor uses it")
        count = np.frombuffer(_read_exactly(file, 8), dtype="<i8")[0]
        if count != storage.numel:
            raise CheckpointError(
                f"storage {key}: {count} elements, expected {storage.numel}"
            )
        raw = _read_exactly(file, int(count) * storage.dtype.itemsize)
        storages[storage.key] = np.frombuffer(
            raw, dtype=storage.dtype.newbyteorder("<")
        )
    return storages


def _read_exactly(file: IO[bytes], size: int) -> bytes:
    data = file.read(size)
    if len(data) != size:
        raise CheckpointError("checkpoint is truncated")
    return data


def _replace_tensors(obj: Any, storages: dict[str, np.ndarray]) -> Any:
    """The unpickled object with each lazy tensor replaced by its numpy array."""
    if isinstance(obj, _LazyTensor):
        data = storages.get(obj.storage.key)
        if data is None:
            raise CheckpointError(f"storage {obj.storage.key} has no data")
        return obj.materialize(data)
    if isinstance(obj, dict):
        return type(obj)((k, _replace_tensors(v, storages)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_replace_tensors(v, storages) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_replace_tensors(v, storages) for v in obj)
    return obj
