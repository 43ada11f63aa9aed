"""ifa for Python: every op of the library through its registry (ctypes, no compiled extension), on NumPy arrays
or, with PyOpenCL, on arrays that stay on the device. docs/python.md has the whole story; in short:

    import numpy as np, ifa
    q = np.random.rand(1, 1, 8 * 64).astype(np.float16)              # BSH query, N = 8, D = 64
    k = v = np.random.rand(1, 512, 2 * 64).astype(np.float16)        # N_kv = 2
    out = ifa.run("IncreFlashAttention", query=q, key=k, value=v, num_heads=8, num_key_value_heads=2,
                  scale_value=0.125)["attention_out"]

For serving, `ctx = ifa.Context(queue=pyopencl_queue)`, `plan = ctx.plan(op, **kwargs)` once, then
`plan.run(query=..., key=..., value=...)` every step (class Plan).

Keyword arguments are the op's inputs (NumPy arrays, or `Tensor` for bfloat16, float8 and int4 data; with ml_dtypes
installed, its bfloat16 and float8 arrays go in and come back as they are) and attributes
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

try:  # optional: pyopencl.array.Array inputs and outputs stay on the device (Context(queue=...))
    import pyopencl as _pyopencl
    import pyopencl.array as _pyopencl_array
except ImportError:  # pragma: no cover - the binding works on NumPy arrays without it
    _pyopencl = _pyopencl_array = None

_DTYPES = ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool", "int4", "float8_e4m3fn",
           "float8_e5m2"]
_NUMPY = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "uint8": np.uint8, "int32": np.int32,
          "int64": np.int64, "bool": np.bool_, "bfloat16": np.uint16, "int4": np.uint8, "float8_e4m3fn": np.uint8,
          "float8_e5m2": np.uint8}
_TENSOR_ONLY = ("bfloat16", "int4", "float8_e4m3fn", "float8_e5m2")  # dtypes NumPy lacks: results come back as Tensor
try:  # ml_dtypes (JAX's NumPy dtypes): bfloat16 and float8 arrays go in as they are and results come back as such
    import ml_dtypes as _ml_dtypes

    _NUMPY.update(bfloat16=_ml_dtypes.bfloat16, float8_e4m3fn=_ml_dtypes.float8_e4m3fn,
                  float8_e5m2=_ml_dtypes.float8_e5m2)
    _TENSOR_ONLY = ("int4",)
except ImportError:
    pass
_ATTR_INT, _ATTR_FLOAT, _ATTR_STRING, _ATTR_BOOL, _ATTR_INT_LIST = range(5)
# input_layout as FlashInfer names it: NHD is (batch or page rows, heads, dim), ifa's BSND; HND is BNSD
_LAYOUT_ALIASES = {"NHD": "BSND", "HND": "BNSD"}
_CL_MEM_READ_WRITE, _CL_MEM_USE_HOST_PTR, _CL_MEM_COPY_HOST_PTR = 1 << 0, 1 << 3, 1 << 5
_CL_DEVICE_TYPE, _CL_DEVICE_MEM_BASE_ADDR_ALIGN, _CL_DEVICE_TYPE_CPU = 0x1000, 0x1019, 1 << 1
_CL_MAP_READ, _CL_MAP_WRITE = 1 << 0, 1 << 1


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
        self.data = data if _is_device_array(data) else np.ascontiguousarray(data)
        self.dtype = dtype
        self.shape = tuple(shape if shape is not None else self.data.shape)


def _is_device_array(x):
    return _pyopencl_array is not None and isinstance(x, _pyopencl_array.Array)


def to_bfloat16(x):
    """float array -> Tensor of bfloat16 (round to nearest even)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return Tensor(u.astype(np.uint16), "bfloat16")


def from_bfloat16(t):
    """Tensor (or uint16 array) of bfloat16 -> float32 array."""
    data = t.data if isinstance(t, Tensor) else t
    if getattr(data, "dtype", None) is not None and data.dtype.name == "bfloat16":  # ml_dtypes' own
        return data.astype(np.float32)
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
    data = t.data if isinstance(t, Tensor) else t
    if getattr(data, "dtype", None) is not None and data.dtype.name == "float8_e4m3fn":  # ml_dtypes' own
        return data.astype(np.float32)
    b = np.ascontiguousarray(data, dtype=np.uint8)
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
    data = t.data if isinstance(t, Tensor) else t
    if getattr(data, "dtype", None) is not None and data.dtype.name == "float8_e5m2":  # ml_dtypes' own
        return data.astype(np.float32)
    b = np.ascontiguousarray(data, dtype=np.uint8)
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
    lib.ifa_context_create.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(C.c_void_p)]
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
    cl.clGetDeviceInfo.argtypes = [C.c_void_p, C.c_uint32, C.c_size_t, C.c_void_p, C.c_void_p]
    cl.clEnqueueMapBuffer.restype = C.c_void_p
    cl.clEnqueueMapBuffer.argtypes = [C.c_void_p, C.c_void_p, C.c_uint, C.c_uint64, C.c_size_t, C.c_size_t, C.c_uint,
                                      C.c_void_p, C.c_void_p, C.POINTER(C.c_int32)]
    cl.clEnqueueUnmapMemObject.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_uint, C.c_void_p, C.c_void_p]
    cl.clReleaseEvent.argtypes = [C.c_void_p]
    cl.clWaitForEvents.argtypes = [C.c_uint, C.POINTER(C.c_void_p)]
    cl.clGetEventProfilingInfo.argtypes = [C.c_void_p, C.c_uint32, C.c_size_t, C.c_void_p, C.c_void_p]
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
    """An ifa context and an in-order queue on a device: selector as ifa_context_create_default (None = the
    IFA_DEVICE variable or the first device, "P:D", or part of a device or platform name), or queue, a
    pyopencl.CommandQueue whose context, device and queue ifa shares, so that that context's pyopencl arrays go in
    and out without a copy."""

    def __init__(self, selector=None, queue=None):
        # close() may run while the interpreter exits, after this module's globals are gone
        self._release_queue, self._destroy = _cl.clReleaseCommandQueue, _lib.ifa_context_destroy
        self._queue, self._own_queue, self._pyqueue = None, False, queue
        self._ctx = C.c_void_p()
        if queue is not None:
            _check(_lib.ifa_context_create(C.c_void_p(queue.context.int_ptr), C.c_void_p(queue.device.int_ptr),
                                           C.byref(self._ctx)))
            self._queue = C.c_void_p(queue.int_ptr)
        else:
            _check(_lib.ifa_context_create_default(selector.encode() if selector else None, C.byref(self._ctx)))
            err = C.c_int32()
            self._queue = _cl.clCreateCommandQueue(_lib.ifa_context_cl_context(self._ctx),
                                                   _lib.ifa_context_device(self._ctx), 0, C.byref(err))
            if err.value != 0:
                raise Error("OPENCL_ERROR", "clCreateCommandQueue failed with %d" % err.value)
            self._own_queue = True
        self._cl_context = _lib.ifa_context_cl_context(self._ctx)
        device = _lib.ifa_context_device(self._ctx)
        kind, align = C.c_uint64(), C.c_uint32()
        _cl.clGetDeviceInfo(device, _CL_DEVICE_TYPE, 8, C.byref(kind), None)
        _cl.clGetDeviceInfo(device, _CL_DEVICE_MEM_BASE_ADDR_ALIGN, 4, C.byref(align), None)
        # on a CPU device a host array's own memory is the buffer (CL_MEM_USE_HOST_PTR) where it is aligned so
        self._host_align = max(align.value // 8, 64) if kind.value & _CL_DEVICE_TYPE_CPU else 0

    def close(self):
        if getattr(self, "_queue", None) and self._own_queue:
            self._release_queue(self._queue)
        self._queue = None
        if getattr(self, "_ctx", None):
            self._destroy(self._ctx)
            self._ctx = None

    def __del__(self):
        self.close()

    def _buffer(self, nbytes, host=None, use_host=False):
        err = C.c_int32()
        flags = _CL_MEM_READ_WRITE | ((_CL_MEM_USE_HOST_PTR if use_host else _CL_MEM_COPY_HOST_PTR)
                                      if host is not None else 0)
        ptr = host.ctypes.data_as(C.c_void_p) if host is not None else None
        mem = _cl.clCreateBuffer(self._cl_context, flags, max(int(nbytes), 1), ptr, C.byref(err))
        if err.value != 0:
            raise Error("OUT_OF_MEMORY", "clCreateBuffer of %d bytes failed with %d" % (nbytes, err.value))
        return mem

    def _read(self, mem, array):
        status = _cl.clEnqueueReadBuffer(self._queue, mem, 1, 0, array.nbytes, array.ctypes.data_as(C.c_void_p), 0,
                                         None, None)
        if status != 0:
            raise Error("OPENCL_ERROR", "clEnqueueReadBuffer failed with %d" % status)

    def _sync_host(self, mem, nbytes):
        """A CL_MEM_USE_HOST_PTR buffer's host memory made current after the queue's work (a blocking map and
        its unmap: no copy where the device uses the memory itself)."""
        err = C.c_int32()
        ptr = _cl.clEnqueueMapBuffer(self._queue, mem, 1, _CL_MAP_READ, 0, max(int(nbytes), 1), 0, None, None,
                                     C.byref(err))
        if err.value != 0:
            raise Error("OPENCL_ERROR", "clEnqueueMapBuffer failed with %d" % err.value)
        _cl.clEnqueueUnmapMemObject(self._queue, mem, ptr, 0, None, None)

    def _zero_copy(self, host):
        """Whether host (a C-contiguous NumPy array) can be the device's buffer as it is."""
        return bool(self._host_align) and host.flags.c_contiguous and host.ctypes.data % self._host_align == 0

    def empty(self, shape, dtype):
        """An uninitialised NumPy array that this context's CPU device uses without a copy (aligned as
        CL_DEVICE_MEM_BASE_ADDR_ALIGN asks); on other devices a plain one."""
        dtype = np.dtype(dtype)
        align = self._host_align or 64
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        raw = np.empty(n + align, dtype=np.uint8)
        start = (-raw.ctypes.data) % align
        return raw[start:start + n].view(dtype).reshape(shape)

    def plan(self, op, **kwargs):
        """Plans op once for these inputs' shapes and dtypes and these attributes (tensors may be NumPy arrays,
        Tensors, pyopencl arrays or only their descriptions: any of them stands for its shape and dtype); returns
        a Plan whose run() takes the tensors, call after call, without planning again (FlashInfer's plan/run)."""
        return Plan(self, op, kwargs)

    def run(self, op, **kwargs):
        """Runs op with named inputs and attributes; returns {name: array} of its outputs and written inputs."""
        p = Plan(self, op, kwargs)
        try:
            return p.run(**{k: v for k, v in kwargs.items() if k in p.tensor_names})
        finally:
            p.close()

    def prepare(self, op, **kwargs):
        """Builds, before serving, the kernels op's steps can need up to these inputs' batch size and lengths
        (IncreFlashAttention: ifa_incre_flash_attention_prepare, each kernel also launched once on a CPU device);
        returns how many distinct kernel sets that covers (0 for the other ops, whose first run builds theirs)."""
        return Plan(self, op, kwargs, prepare=True).prepared


def _spec(name, value):
    """(dtype name, logical shape) of a tensor argument."""
    t = value if isinstance(value, Tensor) else Tensor(value, np.dtype(value.dtype).name if hasattr(value, "dtype")
                                                       else np.asarray(value).dtype.name)
    if t.dtype not in _DTYPES:
        raise Error("UNSUPPORTED_DTYPE", "%s has NumPy dtype %s, which ifa does not take" % (name, t.dtype))
    return t.dtype, tuple(int(x) for x in t.shape)


class Plan:
    """An op planned once (Context.plan): the library's plan, its workspace and the attributes kept. run() takes
    tensors of the planned shapes and dtypes: pyopencl arrays of the context's device stay there (nothing is copied,
    nothing waits: the run is enqueued on the context's queue); NumPy arrays are used in place on a CPU device where
    aligned (Context.empty makes such arrays), else copied in and their results read back. Outputs not given are
    allocated, as device arrays when the query is one. An input the op writes (KVCacheAppend's caches) is written
    in the caller's array."""

    def __init__(self, ctx, op, kwargs, prepare=False):
        self._ctx, self.op, self._ws = ctx, op, None
        # profile: each run keeps its last kernel's device time in device_ns (the context's queue must profile:
        # a pyopencl queue made with PROFILING_ENABLE); for benchmarks
        self.profile, self.device_ns = False, None
        self._d = _find(op)
        defn = _definition(self._d)
        self.tensor_names = [t["name"] for t in defn["inputs"] + defn["outputs"]]
        self._outputs = [t["name"] for t in defn["outputs"]]
        self._written = {t["name"] for t in defn["inputs"] if t.get("written")}
        attr_types = {a["name"]: a["type"] for a in defn["attrs"]}
        self._keep, self._attrs, self._specs = [], [], {}
        for name, value in kwargs.items():
            if name in self.tensor_names:
                self._specs[name] = _spec(name, value)
            elif name in attr_types:
                if name == "input_layout":  # FlashInfer's names for the 4-D layouts
                    value = _LAYOUT_ALIASES.get(value, value)
                self._attrs.append(_named_attr(name, attr_types[name], value, self._keep))
            else:
                raise Error("INVALID_ATTRIBUTE", "%s has no input, output or attribute named \"%s\"" % (op, name))
        call = self._call({})
        outs = (_TensorC * max(len(self._outputs), 1))()
        _check(_lib.ifa_op_infer(self._d, C.byref(call), outs))
        self._allocated = []
        for i, name in enumerate(self._outputs):
            if name not in self._specs and outs[i].ndim > 0:
                self._specs[name] = (_DTYPES[outs[i].dtype], tuple(outs[i].shape[j] for j in range(outs[i].ndim)))
                self._allocated.append(name)
        # the call's descriptors, built once: a run only points them at its buffers
        self._index = {name: i for i, name in enumerate(self._specs)}
        self._c = self._call({})
        call = self._c
        if prepare:
            sets = C.c_int64()
            _check(_lib.ifa_op_prepare(ctx._ctx, self._d, C.byref(call), ctx._queue, C.byref(sets)))
            self.prepared = sets.value
            return
        self._plan = C.create_string_buffer(_lib.ifa_plan_size())
        ws_bytes = C.c_size_t()
        _check(_lib.ifa_op_get_workspace_size(ctx._ctx, self._d, C.byref(call), self._plan, C.byref(ws_bytes)))
        self._ws = ctx._buffer(ws_bytes.value)

    def close(self):
        """Releases the workspace (also when the plan is collected)."""
        if getattr(self, "_ws", None):
            _cl.clReleaseMemObject(self._ws)
            self._ws = None

    def __del__(self):
        self.close()

    def _call(self, bound):
        tensors = []
        for name, (dtype, shape) in self._specs.items():
            mem, offset = bound.get(name, (None, 0))
            tensors.append(_named_tensor(name, dtype, shape, mem, offset, self._keep))
        return _make_call(tensors, self._attrs)

    def run(self, **tensors):
        """Runs the planned op on tensors, named as the op names them (every input the plan was made with; an
        output given is written in place); returns {name: array} of the outputs and the written inputs."""
        ctx = self._ctx
        missing = [n for n in self._specs if n not in tensors and n not in self._allocated]
        if missing:
            raise Error("NULL_ARGUMENT", "%s's plan needs %s" % (self.op, ", ".join(missing)))
        # outputs not given come as the query's kind of array (a device array or NumPy)
        on_device = _is_device_array(_data(tensors.get("query", next(iter(tensors.values()), None))))
        tensors = dict(tensors)
        for name in self._allocated:
            if name not in tensors:
                tensors[name] = self._new_output(name, on_device)
        bound, temps, after, results = {}, [], [], {}
        try:
            for name, value in tensors.items():
                if name not in self._specs:
                    raise Error("INVALID_ATTRIBUTE", "%s's plan has no tensor named \"%s\" (attributes are fixed "
                                "by the plan)" % (self.op, name))
                if not _matches(value, self._specs[name]) and _spec(name, value) != self._specs[name]:
                    raise Error("PLAN_MISMATCH", "%s is %s %s; the plan was made for %s %s" % (
                        (name,) + _spec(name, value) + self._specs[name]))
                writes = name in self._written or name in self._outputs
                bound[name] = self._bind(name, value, writes, temps, after)
                if writes:
                    results[name] = value if isinstance(value, Tensor) or _is_device_array(value) or \
                        self._specs[name][0] not in _TENSOR_ONLY else Tensor(value, self._specs[name][0])
            tensors_c = self._c.tensors
            for name, (mem, offset) in bound.items():
                t = tensors_c[self._index[name]].tensor
                t.buffer, t.offset = mem, offset
            event = C.c_void_p()
            _check(_lib.ifa_op_run(ctx._ctx, self._d, C.byref(self._c), self._plan, self._ws, 0, ctx._queue, 0, None,
                                   C.byref(event) if self.profile else None))
            for sync in after:
                sync()
            if self.profile and event.value:
                self.device_ns = _event_ns(event)
            return results
        finally:
            for mem in temps:
                _cl.clReleaseMemObject(mem)

    def _new_output(self, name, on_device):
        dtype, shape = self._specs[name]
        storage = _storage_shape(shape, dtype)
        if on_device:
            data = _pyopencl_array.empty(self._ctx._pyqueue, storage, _NUMPY[dtype])
        else:
            data = self._ctx.empty(storage, _NUMPY[dtype])
            data.fill(np.nan if dtype in ("float32", "float16") else 0)  # what no kernel wrote shows
        return Tensor(data, dtype, shape) if dtype in _TENSOR_ONLY else data

    def _bind(self, name, value, writes, temps, after):
        """(cl_mem, byte offset) of a tensor for the run; temps collects buffers to release after it, after the
        steps that bring NumPy results back."""
        ctx = self._ctx
        data = _data(value)
        if _is_device_array(data):
            if data.context.int_ptr != C.cast(ctx._cl_context, C.c_void_p).value:
                raise Error("INVALID_ATTRIBUTE", "%s is a pyopencl array of another OpenCL context than this ifa "
                            "Context's (make it with Context(queue=...))" % name)
            if not data.flags.c_contiguous:
                raise Error("INVALID_ATTRIBUTE", "%s is a non-contiguous pyopencl array" % name)
            return data.base_data.int_ptr, data.offset
        if writes and (not isinstance(data, np.ndarray) or not data.flags.writeable):
            raise Error("INVALID_ATTRIBUTE", "%s must be a writeable NumPy array (or Tensor): %s writes it in place"
                        % (name, self.op))
        host = data if isinstance(data, np.ndarray) and data.flags.c_contiguous else np.ascontiguousarray(data)
        use_host = ctx._zero_copy(host) and (host is data or not writes)
        mem = ctx._buffer(host.nbytes, host, use_host=use_host)
        temps.append(mem)
        if writes and use_host:
            after.append(lambda mem=mem, n=host.nbytes: ctx._sync_host(mem, n))
        elif writes:
            after.append(lambda mem=mem, host=host: ctx._read(mem, host))
        return mem, 0


def _event_ns(event):
    """A finished kernel's device time (end - start, ns) from its profiling event, which it releases."""
    _cl.clWaitForEvents(1, C.byref(event))
    t0, t1 = C.c_uint64(), C.c_uint64()
    _cl.clGetEventProfilingInfo(event, 0x1282, 8, C.byref(t0), None)  # CL_PROFILING_COMMAND_START
    _cl.clGetEventProfilingInfo(event, 0x1283, 8, C.byref(t1), None)  # CL_PROFILING_COMMAND_END
    _cl.clReleaseEvent(event)
    return t1.value - t0.value


def _matches(value, spec):
    """Whether an array (NumPy or pyopencl) has the planned NumPy dtype and shape (the quick test before _spec)."""
    dtype, shape = spec
    return (dtype not in _TENSOR_ONLY and getattr(value, "shape", None) == shape and
            getattr(value, "dtype", None) == _NUMPY[dtype])


def _data(value):
    return value.data if isinstance(value, Tensor) else value


def _storage_shape(shape, dtype):
    if dtype != "int4":
        return shape
    return shape[:-1] + ((shape[-1] + 1) // 2,)


def _named_tensor(name, dtype, shape, mem, offset, keep):
    n = _NamedTensor()
    n.name = name.encode()
    keep.append(n.name)
    n.tensor.buffer = mem
    n.tensor.offset = offset
    n.tensor.dtype = _DTYPES.index(dtype)
    n.tensor.ndim = len(shape)
    for i, x in enumerate(shape):
        n.tensor.shape[i] = x
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


def plan(op, **kwargs):
    """Context.plan on the process-wide default context."""
    return _default_context().plan(op, **kwargs)
