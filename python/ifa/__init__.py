"""ifa for Python: every op of the library through its registry, NumPy arrays in and out (ctypes, no
compiled extension).

    import numpy as np, ifa
    q = np.random.rand(1, 1, 8 * 64).astype(np.float16)              # BSH query, N = 8, D = 64
    k = v = np.random.rand(1, 512, 2 * 64).astype(np.float16)        # N_kv = 2
    out = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=2,
                  scale_value=0.125)["attention_out"]

Keyword arguments are the op's inputs (NumPy arrays, or `Tensor` for bfloat16 and int4 data) and attributes
(Python ints, floats, strings, bools and int sequences), named as in `ifa.definition(op)`; `input_layout` also takes
FlashInfer's "NHD" (BSND) and "HND" (BNSD). softmax_lse comes as (B, N, S1); `lse.transpose(0, 2, 1)` gives the
output's (B, S1, N) order. `run` infers the
outputs, allocates them, plans, runs on the default device (or `Context(selector)`), and returns a dict of
NumPy arrays: the outputs, and the inputs the op writes (KVCacheAppend's caches), which are also updated in place
in the caller's arrays, as FlashInfer's and vLLM's appends write theirs (a read-only one is refused). A failure raises
`ifa.Error` with the library's status name and message. The library is the path in $IFA_LIBRARY, else the one
`pip install ./python` put in this package, else the source tree's build/libifa.so, else an installed libifa.so
the loader finds; `ifa.version()` says which release it is.
"""
import ctypes as C
import ctypes.util
import glob
import json
import os

import numpy as np

_DTYPES = ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool", "int4", "float8_e4m3fn",
           "float8_e5m2"]
_NUMPY = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "uint8": np.uint8, "int32": np.int32,
          "int64": np.int64, "bool": np.bool_, "bfloat16": np.uint16, "int4": np.uint8, "float8_e4m3fn": np.uint8,
          "float8_e5m2": np.uint8}
_TENSOR_ONLY = ("bfloat16", "int4", "float8_e4m3fn", "float8_e5m2")  # dtypes NumPy lacks: results come back as Tensor
_ATTR_INT, _ATTR_FLOAT, _ATTR_STRING, _ATTR_BOOL, _ATTR_INT_LIST = range(5)
# input_layout as FlashInfer names it: NHD is (batch or page rows, heads, dim), ifa's BSND; HND is BNSD
_LAYOUT_ALIASES = {"NHD": "BSND", "HND": "BNSD"}
_CL_MEM_READ_WRITE, _CL_MEM_COPY_HOST_PTR = 1 << 0, 1 << 5


class Error(Exception):
    """A failed ifa call: .status is the status name (e.g. "SHAPE_MISMATCH"), the text the library's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Tensor:
    """Data whose dtype NumPy lacks: bfloat16 as uint16 words (the upper half of a float32), int4 as bytes
    holding two values each (low nibble first) with the logical shape given, float8 (float8_e4m3fn,
    float8_e5m2) as its bytes."""

    def __init__(self, data, dtype, shape=None):
        self.data = np.ascontiguousarray(data)
        self.dtype = dtype
        self.shape = tuple(shape if shape is not None else self.data.shape)


def to_bfloat16(x):
    """float array -> Tensor of bfloat16 (round to nearest even)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return Tensor(u.astype(np.uint16), "bfloat16")


def from_bfloat16(t):
    """Tensor (or uint16 array) of bfloat16 -> float32 array."""
    data = t.data if isinstance(t, Tensor) else t
    return (np.ascontiguousarray(data, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _to_float8(x, m_bits, bias, max_value, max_code, dtype):
    """float array -> Tensor of a float8 format with m_bits mantissa bits and exponent bias bias: round to
    nearest even from the value itself, beyond +-max_value saturates to max_code, NaN -> 0x7f."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    min_normal = 2.0 ** (1 - bias)
    f, e = np.frexp(np.where(a >= min_normal, a, 1.0))  # a = f 2^e, f in [0.5, 1)
    m = np.rint((2 * f - 1) * 2 ** m_bits)  # rint rounds half to even
    exp = e - 1 + bias + (m == 2 ** m_bits)
    m = np.where(m == 2 ** m_bits, 0, m)
    code = np.where(a < min_normal, np.rint(a / min_normal * 2 ** m_bits), exp * 2 ** m_bits + m)  # subnormals
    code = np.where((a >= max_value) | (code > max_code), max_code, code).astype(np.uint8)
    code |= np.signbit(x).astype(np.uint8) << 7
    return Tensor(np.where(np.isnan(x), np.uint8(0x7F), code).astype(np.uint8), dtype)


def to_float8_e4m3fn(x):
    """float array -> Tensor of float8 e4m3fn (round to nearest even; beyond +-448 saturates; NaN -> 0x7f)."""
    return _to_float8(x, 3, 7, dtype_max("float8_e4m3fn"), 0x7E, "float8_e4m3fn")


def from_float8_e4m3fn(t):
    """Tensor (or uint8 array) of float8 e4m3fn -> float32 array (0x7f / 0xff are NaN)."""
    b = np.ascontiguousarray(t.data if isinstance(t, Tensor) else t, dtype=np.uint8)
    mag, e, m = b & 0x7F, (b >> 3) & 0xF, (b & 7).astype(np.float64)
    v = np.where(e == 0, m * 2.0 ** -9, (1 + m / 8) * 2.0 ** (e.astype(np.float64) - 7))
    v = np.where(b & 0x80, -v, v)
    return np.where(mag == 0x7F, np.nan, v).astype(np.float32)


def to_float8_e5m2(x):
    """float array -> Tensor of float8 e5m2 (round to nearest even from the value itself, not through float16;
    beyond +-57344 saturates; NaN -> 0x7f)."""
    return _to_float8(x, 2, 15, dtype_max("float8_e5m2"), 0x7B, "float8_e5m2")


def from_float8_e5m2(t):
    """Tensor (or uint8 array) of float8 e5m2 -> float32 array (the upper byte of a float16: infinities and NaNs
    included)."""
    b = np.ascontiguousarray(t.data if isinstance(t, Tensor) else t, dtype=np.uint8)
    return (b.astype(np.uint16) << 8).view(np.float16).astype(np.float32)


class _TensorC(C.Structure):
    _fields_ = [("buffer", C.c_void_p), ("offset", C.c_size_t), ("dtype", C.c_int), ("ndim", C.c_int32),
                ("shape", C.c_int64 * 8)]


class _NamedTensor(C.Structure):
    _fields_ = [("name", C.c_char_p), ("tensor", _TensorC)]


class _NamedAttr(C.Structure):
    _fields_ = [("name", C.c_char_p), ("type", C.c_int), ("i", C.c_int64), ("f", C.c_double), ("s", C.c_char_p),
                ("list", C.POINTER(C.c_int64)), ("list_len", C.c_int64)]


class _Call(C.Structure):
    _fields_ = [("tensors", C.POINTER(_NamedTensor)), ("num_tensors", C.c_int32), ("attrs", C.POINTER(_NamedAttr)),
                ("num_attrs", C.c_int32)]


def _library():
    """$IFA_LIBRARY; else the libifa.so this package was installed with (pip install ./python); else the build
    folder of the source tree this package lies in; else an installed libifa.so the loader finds."""
    path = os.environ.get("IFA_LIBRARY")
    here = os.path.dirname(os.path.abspath(__file__))
    if not path:
        bundled = sorted(glob.glob(os.path.join(here, "libifa.so*")))
        tree = os.path.join(here, "..", "..", "build", "libifa.so")
        path = bundled[0] if bundled else tree if os.path.exists(tree) else ctypes.util.find_library("ifa") or "libifa.so"
    lib = C.CDLL(path)
    lib.ifa_version_string.restype = C.c_char_p
    lib.ifa_last_error.restype = C.c_char_p
    lib.ifa_status_name.restype = C.c_char_p
    lib.ifa_op_find.argtypes = [C.c_char_p, C.POINTER(C.c_void_p)]
    lib.ifa_op_def_json.restype = C.c_void_p
    lib.ifa_op_def_json.argtypes = [C.c_void_p]
    lib.ifa_free.argtypes = [C.c_void_p]
    lib.ifa_plan_size.restype = C.c_size_t
    lib.ifa_op_at.restype = C.c_void_p
    lib.ifa_op_infer.argtypes = [C.c_void_p, C.POINTER(_Call), C.POINTER(_TensorC)]
    lib.ifa_op_get_workspace_size.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(_Call), C.c_void_p,
                                              C.POINTER(C.c_size_t)]
    lib.ifa_op_prepare.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(_Call), C.c_void_p, C.POINTER(C.c_int64)]
    lib.ifa_op_run.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(_Call), C.c_void_p, C.c_void_p, C.c_size_t,
                               C.c_void_p, C.c_uint, C.c_void_p, C.c_void_p]
    lib.ifa_dtype_from_name.argtypes = [C.c_char_p, C.POINTER(C.c_int)]
    lib.ifa_dtype_max.restype = C.c_double
    lib.ifa_dtype_max.argtypes = [C.c_int]
    lib.ifa_context_create_default.argtypes = [C.c_char_p, C.POINTER(C.c_void_p)]
    lib.ifa_context_destroy.argtypes = [C.c_void_p]
    lib.ifa_context_cl_context.restype = C.c_void_p
    lib.ifa_context_cl_context.argtypes = [C.c_void_p]
    lib.ifa_context_device.restype = C.c_void_p
    lib.ifa_context_device.argtypes = [C.c_void_p]
    return lib


def _opencl():
    cl = C.CDLL("libOpenCL.so.1")
    cl.clCreateBuffer.restype = C.c_void_p
    cl.clCreateBuffer.argtypes = [C.c_void_p, C.c_uint64, C.c_size_t, C.c_void_p, C.POINTER(C.c_int32)]
    cl.clCreateCommandQueue.restype = C.c_void_p
    cl.clCreateCommandQueue.argtypes = [C.c_void_p, C.c_void_p, C.c_uint64, C.POINTER(C.c_int32)]
    cl.clEnqueueReadBuffer.argtypes = [C.c_void_p, C.c_void_p, C.c_uint, C.c_size_t, C.c_size_t, C.c_void_p, C.c_uint,
                                       C.c_void_p, C.c_void_p]
    cl.clReleaseMemObject.argtypes = [C.c_void_p]
    cl.clReleaseCommandQueue.argtypes = [C.c_void_p]
    cl.clFinish.argtypes = [C.c_void_p]
    return cl


_lib = _library()
_cl = _opencl()


def _check(status):
    if status != 0:
        raise Error(_lib.ifa_status_name(status).decode(), _lib.ifa_last_error().decode())


def _find(op):
    d = C.c_void_p()
    _check(_lib.ifa_op_find(op.encode(), C.byref(d)))
    return d


def version():
    """The loaded library's version, "major.minor.patch"."""
    return _lib.ifa_version_string().decode()


def dtype_max(name):
    """The largest finite value of a dtype given by name ("float8_e4m3fn" 448, "float8_e5m2" 57344, "int8" 127,
    ...): what a symmetric quantiser divides max|x| by for a per-row scale."""
    code = C.c_int()
    if _lib.ifa_dtype_from_name(name.encode(), C.byref(code)) != 0:
        raise ValueError("unknown dtype %r" % (name,))
    return _lib.ifa_dtype_max(code.value)


def ops():
    """The names of every registered op."""
    return [definition_at(i)["name"] for i in range(_lib.ifa_op_count())]


def definition_at(i):
    """The i-th registered op's definition (as definition)."""
    return _definition(C.c_void_p(_lib.ifa_op_at(i)))


def definition(op):
    """The op's definition (inputs, outputs, attributes, dtype combinations) as the library's JSON, parsed."""
    return _definition(_find(op))


def _definition(d):
    text = _lib.ifa_op_def_json(d)
    if not text:
        raise MemoryError("ifa_op_def_json")
    try:
        return json.loads(C.string_at(text).decode())
    finally:
        _lib.ifa_free(text)


class Context:
    """An ifa context and an in-order queue on a device (selector as ifa_context_create_default: None = the
    IFA_DEVICE variable or the first device, "P:D", or part of a device or platform name)."""

    def __init__(self, selector=None):
        # close() may run while the interpreter exits, after this module's globals are gone
        self._release_queue, self._destroy = _cl.clReleaseCommandQueue, _lib.ifa_context_destroy
        self._queue = None
        self._ctx = C.c_void_p()
        _check(_lib.ifa_context_create_default(selector.encode() if selector else None, C.byref(self._ctx)))
        err = C.c_int32()
        self._queue = _cl.clCreateCommandQueue(_lib.ifa_context_cl_context(self._ctx),
                                               _lib.ifa_context_device(self._ctx), 0, C.byref(err))
        if err.value != 0:
            raise Error("OPENCL_ERROR", "clCreateCommandQueue failed with %d" % err.value)

    def close(self):
        if getattr(self, "_queue", None):
            self._release_queue(self._queue)
            self._queue = None
        if getattr(self, "_ctx", None):
            self._destroy(self._ctx)
            self._ctx = None

    def __del__(self):
        self.close()

    def _buffer(self, nbytes, host=None):
        err = C.c_int32()
        flags = _CL_MEM_READ_WRITE | (_CL_MEM_COPY_HOST_PTR if host is not None else 0)
        ptr = host.ctypes.data_as(C.c_void_p) if host is not None else None
        mem = _cl.clCreateBuffer(_lib.ifa_context_cl_context(self._ctx), flags, max(int(nbytes), 1), ptr, C.byref(err))
        if err.value != 0:
            raise Error("OUT_OF_MEMORY", "clCreateBuffer of %d bytes failed with %d" % (nbytes, err.value))
        return mem

    def _read(self, mem, array):
        status = _cl.clEnqueueReadBuffer(self._queue, mem, 1, 0, array.nbytes, array.ctypes.data_as(C.c_void_p), 0,
                                         None, None)
        if status != 0:
            raise Error("OPENCL_ERROR", "clEnqueueReadBuffer failed with %d" % status)

    def run(self, op, **kwargs):
        """Runs op with named inputs and attributes; returns {name: array} of its outputs and written inputs."""
        return self._call(op, kwargs, prepare=False)

    def prepare(self, op, **kwargs):
        """Builds, before serving, the kernels op's steps can need up to these inputs' batch size and lengths
        (IncreFlashAttention: ifa_incre_flash_attention_prepare, each kernel also launched once on a CPU device);
        returns how many distinct kernel sets that covers (0 for the other ops, whose first run builds theirs)."""
        return self._call(op, kwargs, prepare=True)

    def _call(self, op, kwargs, prepare):
        d = _find(op)
        defn = _definition(d)
        tensor_names = {t["name"] for t in defn["inputs"] + defn["outputs"]}
        attr_types = {a["name"]: a["type"] for a in defn["attrs"]}
        written = {t["name"] for t in defn["inputs"] if t.get("written")}
        keep, mems, tensors, attrs, hosts = [], [], [], [], {}
        try:
            for name, value in kwargs.items():
                if name in tensor_names:
                    t = value if isinstance(value, Tensor) else Tensor(value, np.asarray(value).dtype.name)
                    if t.dtype not in _DTYPES:
                        raise Error("UNSUPPORTED_DTYPE", "%s has NumPy dtype %s, which ifa does not take" % (name, t.dtype))
                    if name in written:
                        target = _written_target(value)
                        if target is None or not target.flags.writeable:
                            raise Error("INVALID_ATTRIBUTE", "%s must be a writeable NumPy array (or Tensor): %s writes "
                                        "it in place" % (name, op))
                    host = np.ascontiguousarray(t.data)
                    mem = self._buffer(host.nbytes, host)
                    mems.append(mem)
                    hosts[name] = (t, mem)
                    tensors.append(_named_tensor(name, t, mem, keep))
                elif name in attr_types:
                    if name == "input_layout":  # FlashInfer's names for the 4-D layouts
                        value = _LAYOUT_ALIASES.get(value, value)
                    attrs.append(_named_attr(name, attr_types[name], value, keep))
                else:
                    raise Error("INVALID_ATTRIBUTE", "%s has no input, output or attribute named \"%s\"" % (op, name))
            call = _make_call(tensors, attrs)
            outs = (_TensorC * max(len(defn["outputs"]), 1))()
            _check(_lib.ifa_op_infer(d, C.byref(call), outs))
            results = {}
            for i, o in enumerate(defn["outputs"]):
                if o["name"] in kwargs or outs[i].ndim == 0:
                    continue
                dtype = _DTYPES[outs[i].dtype]
                shape = tuple(outs[i].shape[j] for j in range(outs[i].ndim))
                t = Tensor(np.full(_storage_shape(shape, dtype), np.nan if dtype in ("float32", "float16") else 0,
                                   dtype=_NUMPY[dtype]), dtype, shape)
                mem = self._buffer(t.data.nbytes)
                mems.append(mem)
                hosts[o["name"]] = (t, mem)
                results[o["name"]] = t
                tensors.append(_named_tensor(o["name"], t, mem, keep))
            call = _make_call(tensors, attrs)
            if prepare:
                sets = C.c_int64()
                _check(_lib.ifa_op_prepare(self._ctx, d, C.byref(call), self._queue, C.byref(sets)))
                return sets.value
            plan = C.create_string_buffer(_lib.ifa_plan_size())
            ws_bytes = C.c_size_t()
            _check(_lib.ifa_op_get_workspace_size(self._ctx, d, C.byref(call), plan, C.byref(ws_bytes)))
            ws = self._buffer(ws_bytes.value)
            mems.append(ws)
            _check(_lib.ifa_op_run(self._ctx, d, C.byref(call), plan, ws, 0, self._queue, 0, None, None))
            _cl.clFinish(self._queue)
            for name in list(results) + [n for n in written if n in hosts]:
                t, mem = hosts[name]
                out = np.empty_like(t.data)
                self._read(mem, out)
                if name in kwargs:  # an input the op writes (a cache): updated in place, as it is on a device
                    target = _written_target(kwargs[name])
                    np.copyto(target, out.reshape(target.shape))
                results[name] = Tensor(out, t.dtype, t.shape) if t.dtype in _TENSOR_ONLY else out
            return results
        finally:
            for mem in mems:
                _cl.clReleaseMemObject(mem)


def _written_target(value):
    """The array an input the op writes is updated in: the caller's NumPy array, or a Tensor's data; else None."""
    a = value.data if isinstance(value, Tensor) else value
    return a if isinstance(a, np.ndarray) else None


def _storage_shape(shape, dtype):
    if dtype != "int4":
        return shape
    return shape[:-1] + ((shape[-1] + 1) // 2,)


def _named_tensor(name, t, mem, keep):
    n = _NamedTensor()
    n.name = name.encode()
    keep.append(n.name)
    n.tensor.buffer = mem
    n.tensor.dtype = _DTYPES.index(t.dtype)
    n.tensor.ndim = len(t.shape)
    for i, s in enumerate(t.shape):
        n.tensor.shape[i] = s
    return n


def _named_attr(name, kind, value, keep):
    types = {"int": _ATTR_INT, "float": _ATTR_FLOAT, "string": _ATTR_STRING, "bool": _ATTR_BOOL,
             "int_list": _ATTR_INT_LIST}
    a = _NamedAttr()
    a.name = name.encode()
    keep.append(a.name)
    a.type = types[kind]
    if kind in ("int", "bool"):
        a.i = int(value)
    elif kind == "float":
        a.f = float(value)
    elif kind == "string":
        a.s = str(value).encode()
        keep.append(a.s)
    else:
        arr = np.ascontiguousarray(np.asarray(value, dtype=np.int64).ravel())
        keep.append(arr)
        a.list = arr.ctypes.data_as(C.POINTER(C.c_int64))
        a.list_len = arr.size
    return a


def _make_call(tensors, attrs):
    t = (_NamedTensor * max(len(tensors), 1))(*tensors)
    a = (_NamedAttr * max(len(attrs), 1))(*attrs)
    call = _Call(t, len(tensors), a, len(attrs))
    call._keep = (t, a)
    return call


_default = None


def _default_context():
    global _default
    if _default is None:
        _default = Context()
    return _default


def run(op, **kwargs):
    """Context.run on a process-wide default context."""
    return _default_context().run(op, **kwargs)


def prepare(op, **kwargs):
    """Context.prepare on the process-wide default context."""
    return _default_context().prepare(op, **kwargs)
