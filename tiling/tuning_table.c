/* The tuning table: one row per device family. The generic GPU row holds the starting values every row begins
 * from; each other row names only what it changes, one line each with the reason and the measurement's device and
 * date (docs/performance.md, DEVICE, DATE: its older measurements say where to find each; docs/tiling.md explains each
 * knob). */
#include "tiling/tuning_table.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiling/device_facts.h"

/* GPUs other than NVIDIA's: the starting values, unmeasured on such a card (no cv by itself, no 8-wide loads, no
 * key tile, no lane or matrix shape); the fields not named here are 0 (off). */
static const ifa_tuning generic_gpu_row = {
    .vendor = IFA_VENDOR_GENERIC_GPU,
    .work_group_size = 128,
    .chunk_rows = 128,
    .local_mem_reserve = 1024,
    .split_min_tokens = 512, /* Ascend IFA's split floor */
    .split_waves = 2,
    .combine_work_group_size = 64,
    .split_rowmax = 1, /* partial rowmax: 1.27-1.62x faster than global, which reads K twice (H200, 2026-11-26) */
    .block_cost_rows = 32,
    .balance_milli = 1100,
    .vector_width = 1, /* the work-group shape */
    .pv_block = 1,
    .append_work_group_size = 64,
    .cv_chunk_rows = 512,
    .cv_workspace_mib = 256,
    .cv_work_group_size = 64,
    .append_heads = 1,
    .lane_group_rows = 8,
};

/* NVIDIA (H100, driver 580, through its OpenCL 3.0). Off and unmeasured on a card: mma_int4 (3-8x faster than the
 * work-group shape, its checks unfinished, 2026-11-27), mma_q_local, mma_f8_cvt, mma_mla, fused_balanced. */
static ifa_tuning nvidia_row(void) {
    ifa_tuning t = generic_gpu_row;
    t.vendor = IFA_VENDOR_NVIDIA;
    t.mma = 5;                 /* transposed matrix shape, rows a step ahead: 117.1 -> 112.6 us (H100, 2026-11-27) */
    t.mma_int8 = 1;            /* int8 in it: 1.81x the lane shape's speed, 3-shape geomean (H100, 2026-11-27) */
    t.mma_bf16 = 1;            /* bf16 in it: 1.20x (H100, 2026-11-27) */
    t.mma_float8 = 1;          /* float8 in it: 0.08-0.25x the work-group shape's time (H100, 2026-11-27) */
    t.fused_combine = 1;       /* the last split combines: 7-shape geomean 87.7 -> 85.8 us (H100, 2026-11-27) */
    t.combine_work_group_size = 256; /* B = 1 32K, 64 splits: 90.6 -> 82.3 us against 64 (H100, 2026-11-27) */
    t.lane_split_waves = 4;    /* the shapes without mma hold more work-groups: 4 waves of splits (H100, 2026-11-26) */
    t.lanes = 2;               /* the lane shape, 2 rows a step: 6-shape geomean 206 -> 182 us (H100, 2026-11-26) */
    t.lane_scores = 1;         /* ... with the transposing butterfly (the same measurement) */
    t.lane_head_groups = 1;    /* head groups of the lane shape, not cv: 176.7 -> 168.6 us (H100, 2026-11-26) */
    t.lane_group_rows = 4;     /* ... of 4 rows: G = 16 D = 64 274 -> 216 us (H100, 2026-11-26) */
    t.split_fill = 1;          /* whole waves: 7-shape geomean 187.9 -> 176.7 us (H100, 2026-11-26) */
    t.small_grid_work_group_size = 256; /* B = 1 8192, 128 work-groups: 54 -> 45 us (H100, 2026-11-26) */
    t.mma_mla_split_tokens = 128; /* a starting value: G = 16 S = 8192 B = 1 in 64 work-groups, not 16 (unmeasured) */
    return t;
}

/* PoCL on CPUs (AMD Zen 3 AVX2 and Zen 4 AVX-512; 2-core VMs; cold means K/V from DRAM). */
static ifa_tuning cpu_row(void) {
    ifa_tuning t = generic_gpu_row;
    t.vendor = IFA_VENDOR_CPU;
    t.work_group_size = 1;     /* one work-item a work-group, vectors along D: PoCL's best (Zen 4, 2026-11-22) */
    t.local_mem_reserve = 0;   /* local memory is host memory */
    t.vector_width = 16;       /* capped at the native width: 16 on AVX-512, 8 on AVX2 */
    t.pv_block = 4;            /* P.V blocks of up to 4 vectors a query row (fewer for a smaller register file) */
    t.pv_block_8rows = 1;      /* 8-row blocks one vector wide: G = 8, 16 0.89-0.96x of the time (Zen 4, 2026-12-01) */
    t.split_min_tokens = 1024; /* a split's least rows, or split_min_work's */
    t.split_min_work = 4096;   /* ... whichever is fewer: MLA G = 16 0.61-0.71x of the rows alone (Zen 4, 2026-11-29) */
    t.split_waves = 1;
    t.combine_work_group_size = 16;
    t.fused_combine = 1;       /* the last split combines (Zen 3, 2026-11-26) */
    t.fused_balanced = 1;      /* a balanced block's last piece combines: MLA 0.92-0.96x (Zen 4, 2026-11-30) */
    t.append_work_group_size = 1; /* 2.6x faster than 16 work-items: an int8 prefill (Zen 4, 2026-11-22) */
    t.append_heads = 64;
    t.cv_workspace_mib = 64;
    t.cv_work_group_size = 1;
    t.batch_fast = 1;          /* PoCL deals out runs of work-groups: every thread a share of each batch */
    t.prefetch_rows = 16;      /* key rows ahead: D = 128 G = 4 S = 8192 2.6-3.5 -> 1.5-2.1 ms (Zen 4, 2026-11-23) */
    t.strided_prefetch_bytes = 4096; /* one head's slices 4 KiB ahead: D = 64 2.3 -> 1.7 ms (Zen 4, 2026-11-23) */
    t.pv_prefetch_rows = 64;   /* P.V asks for the next chunk's keys: D = 256 G = 8 0.75x (Zen 4, 2026-11-29) */
    t.pv_prefetch_rows_16 = 4; /* ... on AVX2 up to 4 rows: G = 4 cold 0.83-0.96x (Zen 3, 2026-11-28) */
    t.pv_prefetch_paged = 2;   /* ... paged up to 2 rows: 256-row blocks 1.14-1.4x faster (Zen 4, 2026-11-25) */
    t.multi_head_rows = 64;    /* all KV heads a BSH/BSND work-group: 3.0 ms against 3.4-5.0 (Zen 3, 2026-11-24) */
    t.multi_head_min_slice_bytes = 256; /* ... on AVX-512 where a head's slice is >= 256 bytes (Zen 4, 2026-11-25) */
    t.multi_head_chunk_bytes = 131072;
    t.multi_head_chunk_bytes_g1 = 32768; /* ... one row a head: 0.84-0.90x of 128 KiB's time (Zen 4, 2026-11-25) */
    t.multi_head_chunk_bytes_16 = 32768; /* ... on AVX2 at any G: 0.70-0.90x of 128 KiB (Zen 3, 2026-11-28) */
    t.multi_head_prefetch_bytes = 8192; /* ... keys 8 KiB ahead: 0.91-0.94x of 16 rows (Zen 4, 2026-11-25) */
    t.spread_prefetch = 1;     /* ... each head's tiles their share: 8.8 -> 6.2 ms (Zen 4, 2026-11-25) */
    return t;
}

/* Intel CPUs: the CPU row with the differences measured on 2-core Xeons (AVX-512). */
static ifa_tuning intel_row(void) {
    ifa_tuning t = cpu_row();
    t.vendor = IFA_VENDOR_CPU_INTEL;
    t.multi_head_min_slice_bytes = 0; /* one head's slices 1.3-1.7x slower than all heads' rows (Xeon, 2026-11-25) */
    t.pv_prefetch_paged = 0;   /* paged P.V without the next chunk's keys: 1.10-1.21x faster (Xeon, 2026-11-25) */
    t.pv_prefetch_rows_16 = 2; /* 4 measured on AMD's Zen 3 only */
    t.buffer_offset = 640;     /* 640 bytes past 2 MiB: at 0 D = 128 G = 4 1.19-1.27x slower (Xeon, 2026-11-25) */
    t.multi_head_prefetch_bytes = 0; /* with the next, level on Emerald Rapids (2026-11-30) */
    t.multi_head_chunk_bytes_g1 = 0;
    t.multi_head_chunk_bytes_16 = 0; /* measured on AMD's Zen 3 only */
    t.pv_block_8rows = 0;      /* measured on Zen 4 only, whose cores run a 512-bit FMA as two 256-bit halves */
    return t;
}

/* Every field but vendor, by its IFA_TUNING key, with the least value it takes (0 only where 0 means "off" or
 * "none"; at most 2^20): ifa__tuning_apply reads them and ifa__tuning_format writes them. */
static const struct {
    const char *key;
    size_t offset;
    long min;
} keys[] = {
    {"work_group_size", offsetof(ifa_tuning, work_group_size), 1},
    {"chunk_rows", offsetof(ifa_tuning, chunk_rows), 1},
    {"local_mem_reserve", offsetof(ifa_tuning, local_mem_reserve), 0},
    {"split_min_tokens", offsetof(ifa_tuning, split_min_tokens), 1},
    {"split_waves", offsetof(ifa_tuning, split_waves), 1},
    {"combine_work_group_size", offsetof(ifa_tuning, combine_work_group_size), 1},
    {"split_rowmax", offsetof(ifa_tuning, split_rowmax), 1},
    {"block_cost_rows", offsetof(ifa_tuning, block_cost_rows), 1},
    {"balance_milli", offsetof(ifa_tuning, balance_milli), 1},
    {"vector_width", offsetof(ifa_tuning, vector_width), 1}, {"pv_block", offsetof(ifa_tuning, pv_block), 1},
    {"append_work_group_size", offsetof(ifa_tuning, append_work_group_size), 1},
    {"cv_min_rows", offsetof(ifa_tuning, cv_min_rows), 0}, {"cv_chunk_rows", offsetof(ifa_tuning, cv_chunk_rows), 1},
    {"cv_workspace_mib", offsetof(ifa_tuning, cv_workspace_mib), 1},
    {"cv_work_group_size", offsetof(ifa_tuning, cv_work_group_size), 1},
    {"multi_head_rows", offsetof(ifa_tuning, multi_head_rows), 0},
    {"append_heads", offsetof(ifa_tuning, append_heads), 1}, {"vector_loads", offsetof(ifa_tuning, vector_loads), 0},
    {"prefetch_rows", offsetof(ifa_tuning, prefetch_rows), 0}, {"batch_fast", offsetof(ifa_tuning, batch_fast), 0},
    {"multi_head_chunk_bytes", offsetof(ifa_tuning, multi_head_chunk_bytes), 0},
    {"multi_head_min_slice_bytes", offsetof(ifa_tuning, multi_head_min_slice_bytes), 0},
    {"multi_head_min_row_bytes", offsetof(ifa_tuning, multi_head_min_row_bytes), 0},
    {"strided_prefetch_bytes", offsetof(ifa_tuning, strided_prefetch_bytes), 0},
    {"pv_prefetch_rows", offsetof(ifa_tuning, pv_prefetch_rows), 0},
    {"pv_prefetch_rows_16", offsetof(ifa_tuning, pv_prefetch_rows_16), 0},
    {"pv_prefetch_paged", offsetof(ifa_tuning, pv_prefetch_paged), 0},
    {"buffer_offset", offsetof(ifa_tuning, buffer_offset), 0},
    {"spread_prefetch", offsetof(ifa_tuning, spread_prefetch), 0},
    {"multi_head_prefetch_bytes", offsetof(ifa_tuning, multi_head_prefetch_bytes), 0},
    {"multi_head_chunk_bytes_g1", offsetof(ifa_tuning, multi_head_chunk_bytes_g1), 0},
    {"key_tile", offsetof(ifa_tuning, key_tile), 0}, {"lanes", offsetof(ifa_tuning, lanes), 0},
    {"lane_prefetch", offsetof(ifa_tuning, lane_prefetch), 0},
    {"lane_head_groups", offsetof(ifa_tuning, lane_head_groups), 0},
    {"lane_scores", offsetof(ifa_tuning, lane_scores), 0}, {"mma", offsetof(ifa_tuning, mma), 0},
    {"lane_group_rows", offsetof(ifa_tuning, lane_group_rows), 1},
    {"small_grid_work_group_size", offsetof(ifa_tuning, small_grid_work_group_size), 0},
    {"split_fill", offsetof(ifa_tuning, split_fill), 0}, {"lane_q_local", offsetof(ifa_tuning, lane_q_local), 0},
    {"mma_int8", offsetof(ifa_tuning, mma_int8), 0}, {"mma_bf16", offsetof(ifa_tuning, mma_bf16), 0},
    {"mma_group_rows", offsetof(ifa_tuning, mma_group_rows), 0},
    {"fused_combine", offsetof(ifa_tuning, fused_combine), 0},
    {"lane_split_waves", offsetof(ifa_tuning, lane_split_waves), 0},
    {"mma_float8", offsetof(ifa_tuning, mma_float8), 0}, {"mma_int4", offsetof(ifa_tuning, mma_int4), 0},
    {"mma_q_local", offsetof(ifa_tuning, mma_q_local), 0}, {"mma_f8_cvt", offsetof(ifa_tuning, mma_f8_cvt), 0},
    {"multi_head_chunk_bytes_16", offsetof(ifa_tuning, multi_head_chunk_bytes_16), 0},
    {"mma_mla", offsetof(ifa_tuning, mma_mla), 0},
    {"mma_mla_split_tokens", offsetof(ifa_tuning, mma_mla_split_tokens), 0},
    {"split_min_work", offsetof(ifa_tuning, split_min_work), 0},
    {"fused_balanced", offsetof(ifa_tuning, fused_balanced), 0},
    {"pv_block_8rows", offsetof(ifa_tuning, pv_block_8rows), 0}
};
enum { KEYS = sizeof keys / sizeof keys[0] };

static int32_t *field(ifa_tuning *t, size_t i) { return (int32_t *)((char *)t + keys[i].offset); }
static int32_t value(const ifa_tuning *t, size_t i) { return *(const int32_t *)((const char *)t + keys[i].offset); }

int ifa__tuning_apply(ifa_tuning *t, const char *s, char *err, size_t err_size) {
    int bad = 0;
    while (s && *s) {
        const char *comma = strchr(s, ','), *stop = comma ? comma : s + strlen(s);
        const char *eq = memchr(s, '=', (size_t)(stop - s));
        size_t i = 0, n = eq ? (size_t)(eq - s) : 0;
        while (i < KEYS && !(n == strlen(keys[i].key) && strncmp(s, keys[i].key, n) == 0)) ++i;
        if (stop > s) {
            char *end = NULL;
            const long v = eq ? strtol(eq + 1, &end, 10) : 0;
            if (i < KEYS && end == stop && end != eq + 1 && v >= keys[i].min && v <= (1L << 20)) {
                *field(t, i) = (int32_t)v;
            } else if (!bad++ && err && err_size) {
                /* the first bad entry only: the ones after it still apply */
                if (i < KEYS)
                    snprintf(err, err_size, "tuning key %s takes an integer in [%ld, %ld], not \"%.*s\"", keys[i].key,
                             keys[i].min, 1L << 20, (int)(stop - (eq + 1)), eq + 1);
                else
                    snprintf(err, err_size, "\"%.*s\" is not key=value with a key of the tuning row (tiling/tuning_table.h)",
                             (int)(stop - s), s);
            }
        }
        s = comma ? comma + 1 : stop;
    }
    return bad ? -1 : 0;
}

int ifa__tuning_format(const ifa_tuning *t, char *out, size_t n) {
    size_t w = 0;
    if (n) out[0] = '\0';
    for (size_t i = 0; i < KEYS; ++i) {
        const int k = snprintf(out + w, n > w ? n - w : 0, "%s%s=%d", i ? "," : "", keys[i].key,
                               (int)value(t, i));
        if (k < 0 || (w += (size_t)k) >= n) return -1;
    }
    return 0;
}

/* IFA_TUNING: entries that are not a known key with a value in range are skipped (the planner has no channel for
 * a warning; ifa-bench's --variant checks its own with ifa__tuning_apply) */
static void apply_env(ifa_tuning *t) {
    const char *env = getenv("IFA_TUNING");
    if (env) (void)ifa__tuning_apply(t, env, NULL, 0);
}

ifa_tuning ifa__tuning_for(int32_t vendor) {
    ifa_tuning t = vendor == IFA_VENDOR_NVIDIA     ? nvidia_row()
                   : vendor == IFA_VENDOR_CPU       ? cpu_row()
                   : vendor == IFA_VENDOR_CPU_INTEL ? intel_row()
                                                    : generic_gpu_row;
    apply_env(&t);
    return t;
}
