"""Device tensors as launch arguments: torch tensors, objects with
__cuda_array_interface__ (CuPy, Numba, ...) and DLPack producers."""
import ctypes
import sys

# __cuda_array_interface__ typestr -> tlc dtype name
_TYPESTR = {"<f2": "float16", "<f4": "float32", "|i1": "int8", "<i2": "int16", "<i4": "int32", "<i8": "int64",
            "|u1": "uint8", "<u2": "uint16", "<u4": "uint32", "|b1": "bool"}
# DLPack (code, bits) -> tlc dtype name
_DL_DTYPE = {(2, 16): "float16", (4, 16): "bfloat16", (2, 32): "float32", (0, 8): "int8", (0, 16): "int16",
             (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32",
             (6, 8): "bool"}
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DTYPE_NAMES = ("float16", "bfloat16", "float32", "float8_e4m3", "float8_e5m2", "int8", "int16", "int32", "int64",
                "uint8", "uint16", "uint32", "bool")


class DeviceTensor:
    """What a launch needs of a tensor: address, dtype name, shape, strides (elements), device index,
    the stream handle its library makes current (None: unknown; a callable: asked when first read,
    since a launch reads only one tensor's), and what keeps the memory alive."""

    def __init__(self, ptr, dtype, shape, strides, device, stream, keep):
        self.ptr, self.dtype, self.shape, self.strides = ptr, dtype, tuple(shape), strides
        self.device, self._stream, self.keep = device, stream, keep

    @property
    def stream(self):
        if callable(self._stream):
            self._stream = self._stream()
        return self._stream


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_torch_names = None


def _torch_dtype_names():
    """torch dtype -> tlc dtype name (built once: every launch asks it of each tensor)."""
    global _torch_names
    if _torch_names is None:
        import torch
        names = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
                 torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
                 torch.uint8: "uint8", torch.bool: "bool"}
        for attr, name in (("float8_e4m3fn", "float8_e4m3"), ("float8_e5m2", "float8_e5m2"), ("uint16", "uint16"),
                           ("uint32", "uint32")):
            if getattr(torch, attr, None) is not None:
                names[getattr(torch, attr)] = name
        _torch_names = names
    return _torch_names


def _torch_stream(device):
    """The CUstream handle torch makes current on device: through torch's raw accessor where it has
    one (a tenth of torch.cuda.current_stream's cost), else the public call."""
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def dtype_name(dtype):
    """tlc's name ("bfloat16", as in -D dtype=...) of a torch or NumPy dtype."""
    if "torch" in sys.modules and isinstance(dtype, sys.modules["torch"].dtype):
        names = _torch_dtype_names()
        if dtype in names:
            return names[dtype]
    else:
        name = {"float8_e4m3fn": "float8_e4m3"}.get(getattr(dtype, "name", str(dtype)), str(dtype))
        if name in _DTYPE_NAMES:
            return name
    raise TypeError(f"{dtype} is not a tlc dtype")


def _from_torch(t):
    import torch
    names = _torch_dtype_names()
    if t.dtype not in names:
        raise TypeError(f"torch dtype {t.dtype} is not a tlc dtype")
    if not t.is_cuda:
        raise TypeError("a tlc kernel takes CUDA tensors; this torch tensor is on " + str(t.device))
    device = t.get_device()
    if device < 0:
        device = torch.cuda.current_device()
    return DeviceTensor(t.data_ptr(), names[t.dtype], t.shape, t.stride(), device, lambda: _torch_stream(device), t)


def _from_cai(obj):
    cai = obj.__cuda_array_interface__
    typestr = cai["typestr"]
    if typestr not in _TYPESTR:
        raise TypeError(f"__cuda_array_interface__ typestr {typestr!r} is not a tlc dtype")
    item = int(typestr[2:])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        if any(s % item for s in strides):
            raise TypeError("strides that are not a whole number of elements")
        strides = tuple(s // item for s in strides)
    device, stream = None, None
    if "cupy" in sys.modules and isinstance(obj, sys.modules["cupy"].ndarray):
        cupy = sys.modules["cupy"]
        device, stream = obj.device.id, cupy.cuda.get_current_stream().ptr
    return DeviceTensor(cai["data"][0], _TYPESTR[typestr], shape, strides, device, stream, obj)


def _from_dlpack(obj):
    capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # DLManagedTensor starts with its DLTensor; the capsule keeps it alive (and frees it) while we hold it.
    dl = _DLTensor.from_address(get(capsule, b"dltensor"))
    if dl.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise TypeError(f"a tlc kernel takes CUDA tensors; this DLPack tensor is on device type "
                        f"{dl.device.device_type}")
    key = (dl.dtype.code, dl.dtype.bits)
    if key not in _DL_DTYPE or dl.dtype.lanes != 1:
        raise TypeError(f"DLPack dtype code {dl.dtype.code} bits {dl.dtype.bits} is not a tlc dtype")
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    strides = tuple(dl.strides[i] for i in range(dl.ndim)) if dl.strides else None
    return DeviceTensor((dl.data or 0) + dl.byte_offset, _DL_DTYPE[key], shape, strides, dl.device.device_id,
                        None, (obj, capsule))


def device_tensor(obj):
    """A DeviceTensor for obj, or None when obj is not a tensor (a scalar)."""
    if "torch" in sys.modules and isinstance(obj, sys.modules["torch"].Tensor):
        return _from_torch(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    return None
