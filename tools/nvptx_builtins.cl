/* OpenCL C builtins for clang's nvptx64 target, which has no library of its own: enough of them, written as
 * NVIDIA's own would compile (special registers, bar.sync, cvt, libdevice's math), that ptxas can allocate the
 * kernel's registers. Prepended to the kernel source; libdevice linked with -mlink-builtin-bitcode. */
float __nv_expf(float);
float __nv_logf(float);
float __nv_tanhf(float);
float __nv_sinf(float);
float __nv_cosf(float);
float __nv_exp2f(float);
float __nv_log2f(float);
float __nv_powf(float, float);
float __nv_frexpf(float, int *);
float __nv_ldexpf(float, int);

#define IFA_SREG(name, reg)                                                                                         \
    size_t __attribute__((overloadable, always_inline)) name(uint d) {                                              \
        uint r;                                                                                                     \
        if (d == 0)                                                                                                 \
            __asm__("mov.u32 %0, %%" reg ".x;" : "=r"(r));                                                          \
        else if (d == 1)                                                                                            \
            __asm__("mov.u32 %0, %%" reg ".y;" : "=r"(r));                                                          \
        else if (d == 2)                                                                                            \
            __asm__("mov.u32 %0, %%" reg ".z;" : "=r"(r));                                                          \
        else                                                                                                        \
            r = 0;                                                                                                  \
        return r;                                                                                                   \
    }
IFA_SREG(get_local_id, "tid")
IFA_SREG(get_group_id, "ctaid")
IFA_SREG(get_num_groups, "nctaid")
IFA_SREG(get_local_size, "ntid")
size_t __attribute__((overloadable, always_inline)) get_global_id(uint d) {
    return get_group_id(d) * get_local_size(d) + get_local_id(d);
}
void __attribute__((overloadable, always_inline)) barrier(cl_mem_fence_flags f) {
    (void)f;
    __asm__ volatile("bar.sync 0;" ::: "memory");
}
void __attribute__((overloadable, always_inline)) mem_fence(cl_mem_fence_flags f) {
    (void)f;
    __asm__ volatile("membar.gl;" ::: "memory");
}
int __attribute__((overloadable, always_inline)) atomic_inc(volatile __global int *p) {
    int r;
    __asm__ volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(r) : "l"(p) : "memory");
    return r;
}
int __attribute__((overloadable, always_inline)) atomic_xchg(volatile __global int *p, int v) {
    int r;
    __asm__ volatile("atom.global.exch.b32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory");
    return r;
}
int __attribute__((overloadable, always_inline)) atomic_add(volatile __global int *p, int v) {
    int r;
    __asm__ volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory");
    return r;
}

static inline float ifa_nvb_h2f(ushort u) {
    float f;
    __asm__("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(u));
    return f;
}
static inline ushort ifa_nvb_f2h(float f) {
    ushort u;
    __asm__("cvt.rn.f16.f32 %0, %1;" : "=h"(u) : "f"(f));
    return u;
}
#define IFA_VLH(AS)                                                                                                 \
    float __attribute__((overloadable, always_inline)) vload_half(size_t o, const AS half *p) {                     \
        return ifa_nvb_h2f(((const AS ushort *)p)[o]);                                                              \
    }                                                                                                               \
    float4 __attribute__((overloadable, always_inline)) vload_half4(size_t o, const AS half *p) {                   \
        ushort4 u = vload4(o, (const AS ushort *)p);                                                                \
        return (float4)(ifa_nvb_h2f(u.s0), ifa_nvb_h2f(u.s1), ifa_nvb_h2f(u.s2), ifa_nvb_h2f(u.s3));                \
    }                                                                                                               \
    float8 __attribute__((overloadable, always_inline)) vload_half8(size_t o, const AS half *p) {                   \
        return (float8)(vload_half4(2 * o, p), vload_half4(2 * o + 1, p));                                         \
    }
IFA_VLH(__global)
IFA_VLH(__local)
IFA_VLH(__private)
IFA_VLH(__constant)
#define IFA_VSH(name, AS)                                                                                           \
    void __attribute__((overloadable, always_inline)) name(float f, size_t o, AS half *p) {                         \
        ((AS ushort *)p)[o] = ifa_nvb_f2h(f);                                                                       \
    }
IFA_VSH(vstore_half_rte, __global)
IFA_VSH(vstore_half_rte, __local)
IFA_VSH(vstore_half, __global)
IFA_VSH(vstore_half, __local)

/* vloadN / vstoreN of every element type and address space the kernels use: plain element loads, which
 * NVIDIA's compiler also emits for an unaligned vload */
#define IFA_VL(T, N, AS)                                                                                            \
    T##N __attribute__((overloadable, always_inline)) vload##N(size_t o, const AS T *p) {                           \
        T##N r;                                                                                                     \
        for (int i = 0; i < N; i++)                                                                                 \
            ((T *)&r)[i] = p[o * N + i];                                                                            \
        return r;                                                                                                   \
    }                                                                                                               \
    void __attribute__((overloadable, always_inline)) vstore##N(T##N v, size_t o, AS T *p) {                        \
        for (int i = 0; i < N; i++)                                                                                 \
            p[o * N + i] = ((T *)&v)[i];                                                                            \
    }
#define IFA_VLC(T, N)                                                                                               \
    T##N __attribute__((overloadable, always_inline)) vload##N(size_t o, const __constant T *p) {                    \
        T##N r;                                                                                                     \
        for (int i = 0; i < N; i++)                                                                                 \
            ((T *)&r)[i] = p[o * N + i];                                                                            \
        return r;                                                                                                   \
    }
#define IFA_VL_AS(T, N) IFA_VL(T, N, __global) IFA_VL(T, N, __local) IFA_VL(T, N, __private) IFA_VLC(T, N)
#define IFA_VL_T(T) IFA_VL_AS(T, 2) IFA_VL_AS(T, 4) IFA_VL_AS(T, 8) IFA_VL_AS(T, 16)
IFA_VL_T(float)
IFA_VL_T(uint)
IFA_VL_T(int)
IFA_VL_T(ushort)
IFA_VL_T(short)
IFA_VL_T(uchar)
IFA_VL_T(char)

#define IFA_CVT(D, S, N)                                                                                            \
    D##N __attribute__((overloadable, always_inline)) convert_##D##N(S##N x) {                                      \
        return __builtin_convertvector(x, D##N);                                                                    \
    }
#define IFA_CVT_N(D, S) IFA_CVT(D, S, 2) IFA_CVT(D, S, 4) IFA_CVT(D, S, 8) IFA_CVT(D, S, 16)
#define IFA_CVT_S(D, S)                                                                                             \
    D __attribute__((overloadable, always_inline)) convert_##D(S x) {                                               \
        return (D)x;                                                                                                \
    }
#define IFA_CVT_ALL(D)                                                                                              \
    IFA_CVT_N(D, float) IFA_CVT_N(D, uint) IFA_CVT_N(D, int) IFA_CVT_N(D, ushort) IFA_CVT_N(D, short)               \
    IFA_CVT_N(D, uchar) IFA_CVT_N(D, char) IFA_CVT_S(D, float) IFA_CVT_S(D, uint) IFA_CVT_S(D, int)                 \
    IFA_CVT_S(D, ushort) IFA_CVT_S(D, short) IFA_CVT_S(D, uchar) IFA_CVT_S(D, char)
IFA_CVT_ALL(float)
IFA_CVT_ALL(uint)
IFA_CVT_ALL(int)
IFA_CVT_ALL(ushort)
IFA_CVT_ALL(short)
IFA_CVT_ALL(uchar)
IFA_CVT_ALL(char)

/* the rounding, saturating forms the kernels use (int8 output) */
char __attribute__((overloadable, always_inline)) convert_char_sat_rte(float x) {
    return (char)__builtin_fminf(__builtin_fmaxf(__builtin_rintf(x), -128.0f), 127.0f);
}
uchar __attribute__((overloadable, always_inline)) convert_uchar_sat_rte(float x) {
    return (uchar)__builtin_fminf(__builtin_fmaxf(__builtin_rintf(x), 0.0f), 255.0f);
}

#define IFA_F1(name, impl)                                                                                          \
    float __attribute__((overloadable, always_inline)) name(float x) { return impl(x); }                          \
    float2 __attribute__((overloadable, always_inline)) name(float2 x) { return (float2)(impl(x.x), impl(x.y)); }  \
    float4 __attribute__((overloadable, always_inline)) name(float4 x) {                                           \
        return (float4)(name(x.lo), name(x.hi));                                                                   \
    }                                                                                                               \
    float8 __attribute__((overloadable, always_inline)) name(float8 x) {                                           \
        return (float8)(name(x.lo), name(x.hi));                                                                   \
    }                                                                                                               \
    float16 __attribute__((overloadable, always_inline)) name(float16 x) {                                         \
        return (float16)(name(x.lo), name(x.hi));                                                                  \
    }
IFA_F1(exp, __nv_expf)
IFA_F1(log, __nv_logf)
IFA_F1(tanh, __nv_tanhf)
IFA_F1(sin, __nv_sinf)
IFA_F1(cos, __nv_cosf)
IFA_F1(exp2, __nv_exp2f)
IFA_F1(log2, __nv_log2f)
IFA_F1(native_exp, __nv_expf)
IFA_F1(native_exp2, __nv_exp2f)
IFA_F1(fabs, __builtin_fabsf)
IFA_F1(rint, __builtin_rintf)
IFA_F1(floor, __builtin_floorf)
IFA_F1(ceil, __builtin_ceilf)
IFA_F1(trunc, __builtin_truncf)
IFA_F1(sqrt, __builtin_sqrtf)
IFA_F1(native_recip, 1.0f /)
#define IFA_F2(name, impl)                                                                                          \
    float __attribute__((overloadable, always_inline)) name(float x, float y) { return impl(x, y); }               \
    float2 __attribute__((overloadable, always_inline)) name(float2 x, float2 y) {                                 \
        return (float2)(impl(x.x, y.x), impl(x.y, y.y));                                                           \
    }                                                                                                               \
    float4 __attribute__((overloadable, always_inline)) name(float4 x, float4 y) {                                 \
        return (float4)(name(x.lo, y.lo), name(x.hi, y.hi));                                                       \
    }                                                                                                               \
    float8 __attribute__((overloadable, always_inline)) name(float8 x, float8 y) {                                 \
        return (float8)(name(x.lo, y.lo), name(x.hi, y.hi));                                                       \
    }                                                                                                               \
    float16 __attribute__((overloadable, always_inline)) name(float16 x, float16 y) {                              \
        return (float16)(name(x.lo, y.lo), name(x.hi, y.hi));                                                      \
    }
IFA_F2(fmax, __builtin_fmaxf)
IFA_F2(fmin, __builtin_fminf)
IFA_F2(pow, __nv_powf)
#define IFA_F3(name, impl)                                                                                          \
    float __attribute__((overloadable, always_inline)) name(float x, float y, float z) { return impl(x, y, z); }   \
    float2 __attribute__((overloadable, always_inline)) name(float2 x, float2 y, float2 z) {                       \
        return (float2)(impl(x.x, y.x, z.x), impl(x.y, y.y, z.y));                                                 \
    }                                                                                                               \
    float4 __attribute__((overloadable, always_inline)) name(float4 x, float4 y, float4 z) {                       \
        return (float4)(name(x.lo, y.lo, z.lo), name(x.hi, y.hi, z.hi));                                           \
    }                                                                                                               \
    float8 __attribute__((overloadable, always_inline)) name(float8 x, float8 y, float8 z) {                       \
        return (float8)(name(x.lo, y.lo, z.lo), name(x.hi, y.hi, z.hi));                                           \
    }                                                                                                               \
    float16 __attribute__((overloadable, always_inline)) name(float16 x, float16 y, float16 z) {                   \
        return (float16)(name(x.lo, y.lo, z.lo), name(x.hi, y.hi, z.hi));                                          \
    }
IFA_F3(fma, __builtin_fmaf)
IFA_F3(mad, __builtin_fmaf)
float __attribute__((overloadable, always_inline)) dot(float4 a, float4 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
float __attribute__((overloadable, always_inline)) dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
float __attribute__((overloadable, always_inline)) frexp(float x, int *e) { return __nv_frexpf(x, e); }
float __attribute__((overloadable, always_inline)) ldexp(float x, int e) { return __nv_ldexpf(x, e); }
#define IFA_I(T)                                                                                                    \
    T __attribute__((overloadable, always_inline)) min(T a, T b) { return a < b ? a : b; }                         \
    T __attribute__((overloadable, always_inline)) max(T a, T b) { return a > b ? a : b; }                         \
    T __attribute__((overloadable, always_inline)) clamp(T x, T a, T b) { return min(max(x, a), b); }
IFA_I(int)
IFA_I(uint)
IFA_I(long)
IFA_I(ulong)
uint __attribute__((overloadable, always_inline)) abs(int x) { return x < 0 ? -x : x; }
/* select(a, b, c): each element b where c's top bit is set, else a (the vector form's rule) */
float8 __attribute__((overloadable, always_inline)) select(float8 a, float8 b, int8 c) {
    return as_float8((as_int8(a) & ~(c >> 31)) | (as_int8(b) & (c >> 31)));
}
