#define _POSIX_C_SOURCE 200809L
/* The planner and the tiling key, without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tiling/planner.h"
#include "tiling/template_choice.h"
#include "tiling/tiling_key.h"

/* The plan check refuses plan with the edits (statements on a copy named bad, e.g. bad.lanes = 9) applied: one
 * line per rule, the failure naming the edit. */
#define ck_plan_refuses(plan, ...)                                                                                \
    do {                                                                                                          \
        ifa_plan bad = (plan);                                                                                    \
        __VA_ARGS__;                                                                                              \
        ck_assert_msg(ifa__plan_check(&bad) == IFA_STATUS_INVALID_PLAN, "the plan check took %s", #__VA_ARGS__); \
    } while (0)

static ifa_problem problem(int64_t b, int64_t n, int64_t nkv, int64_t d, int64_t s) {
    ifa_problem p;
    memset(&p, 0, sizeof p);
    p.batch = b, p.num_heads = n, p.num_kv_heads = nkv, p.head_dim = d, p.seq_q = 1, p.seq_kv = s;
    p.layout = IFA_LAYOUT_BSH, p.q_dtype = p.kv_dtype = p.out_dtype = IFA_DTYPE_FLOAT16;
    p.lengths_mode = IFA_LENGTHS_FULL, p.uniform_length = p.max_length = s, p.total_length = s * b;
    return p;
}

/* The same in the BSND layout. */
static ifa_problem bsnd_problem(int64_t b, int64_t n, int64_t nkv, int64_t d, int64_t s) {
    ifa_problem p = problem(b, n, nkv, d, s);
    p.layout = IFA_LAYOUT_BSND;
    return p;
}

static const ifa_device_facts h100 = {IFA_VENDOR_NVIDIA, 132, 1024, 0, 48 * 1024, 90};
static const ifa_device_facts pocl = {IFA_VENDOR_CPU, 2, 4096, 0, 2 * 1024 * 1024, 0};
/* the same 2-core PoCL device planned with Intel's row, and as an AVX2 core (16 vector registers) */
static const ifa_device_facts intel = {IFA_VENDOR_CPU_INTEL, 2, 4096, 0, 2 * 1024 * 1024, 0};
static const ifa_device_facts avx2 = {IFA_VENDOR_CPU, 2, 4096, 8, 2 * 1024 * 1024, 0};

/* The plan of p on dev with the tuning entries extra added for this one plan (test_tuning_push's). */
static void plan_tuned(const char *extra, const ifa_problem *p, const ifa_device_facts *dev, ifa_plan *plan) {
    test_tuning_push(extra);
    const ifa_status st = ifa__plan_make(p, dev, plan);
    test_tuning_pop();
    ck_assert_int_eq(st, IFA_STATUS_OK);
}

START_TEST(key_round_trip_over_legal_values) {
    const ifa_key_field *f = ifa__key_fields();
    int32_t v[IFA_KEY_FIELD_COUNT_], back[IFA_KEY_FIELD_COUNT_];
    /* every legal value of every field, the others at their first legal value */
    for (int i = 0; i < IFA_KEY_FIELD_COUNT_; ++i) {
        for (int x = 0; x < 10; ++x) {
            if (!(f[i].legal_mask >> x & 1)) continue;
            for (int j = 0; j < IFA_KEY_FIELD_COUNT_; ++j) {
                v[j] = 0;
                while (!(f[j].legal_mask >> v[j] & 1)) v[j]++;
            }
            v[i] = x;
            uint64_t key;
            ck_assert_int_eq(ifa__key_encode(v, &key), IFA_STATUS_OK);
            ck_assert_int_eq(ifa__key_decode(key, back), IFA_STATUS_OK);
            ck_assert_mem_eq(v, back, sizeof v);
            ck_assert_ptr_nonnull(f[i].names[x]);
        }
    }
}
END_TEST

START_TEST(key_rejects_illegal) {
    int32_t v[IFA_KEY_FIELD_COUNT_] = {0};
    v[IFA_KEY_TEMPLATE] = 1, v[IFA_KEY_MODE] = 1;
    uint64_t key;
    ck_assert_int_eq(ifa__key_encode(v, &key), IFA_STATUS_OK);
    int32_t back[IFA_KEY_FIELD_COUNT_];
    v[IFA_KEY_LAYOUT] = 3;
    ck_assert_int_eq(ifa__key_encode(v, &key), IFA_STATUS_INVALID_PLAN);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "layout = 3"));
    v[IFA_KEY_LAYOUT] = 0, v[IFA_KEY_SPLIT_KV] = 4; /* no fourth split mode */
    ck_assert_int_eq(ifa__key_encode(v, &key), IFA_STATUS_INVALID_PLAN);
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 3, back), IFA_STATUS_INVALID_PLAN); /* layout 3 */
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 500000000000ull, back), IFA_STATUS_INVALID_PLAN); /* rope 5 */
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 6000000000000ull, back), IFA_STATUS_INVALID_PLAN); /* value antiquant 6 */
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 90000000000000ull, back), IFA_STATUS_INVALID_PLAN); /* shape 9 */
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 100000000000000ull, back), IFA_STATUS_INVALID_PLAN); /* extra digit */
    ck_assert_int_eq(ifa__key_decode(0, back), IFA_STATUS_INVALID_PLAN); /* template 0, mode 0 */
    /* float8_e5m2 (ifa_dtype 10) is kv_dtype digit 4, which no query or output dtype takes */
    ck_assert_int_eq(ifa__key_dtype_digit(IFA_DTYPE_FLOAT8_E5M2), 4);
    ck_assert_int_eq(ifa__key_dtype_digit(IFA_DTYPE_FLOAT8_E4M3), 9);
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 400, back), IFA_STATUS_OK);
    ck_assert_int_eq(back[IFA_KEY_KV_DTYPE], 4);
    ck_assert_str_eq(ifa__key_fields()[IFA_KEY_KV_DTYPE].names[4], "float8_e5m2");
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 40, back), IFA_STATUS_INVALID_PLAN);   /* q_dtype 4 */
    ck_assert_int_eq(ifa__key_decode(10000010000ull + 4000, back), IFA_STATUS_INVALID_PLAN); /* out_dtype 4 */
}
END_TEST

/* The cv template's plan: entries (batch, KV head, split) x rows G x S1, chunks that cover every row of an
 * entry, workspace regions aligned, disjoint and in order, a chunk shrunk to the workspace budget, equal
 * splits only (never balanced units or global rowmax), and the plan check catching a broken field. */
START_TEST(cv_plan) {
    ifa_problem p = problem(3, 32, 4, 128, 5000);
    p.template_request = IFA_TEMPLATE_CV, p.seq_q = 2, p.causal = 1;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.template_id, IFA_TEMPLATE_CV);
    ck_assert_int_eq(plan.tiling_key / 10000 % 10, IFA_TEMPLATE_CV);
    ck_assert_int_eq(plan.cv_rows, 8 * 2);
    ck_assert_int_eq(plan.cv_entries, 3 * 4 * plan.max_splits);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_ge((int64_t)plan.cv_steps * plan.chunk_rows, plan.split_kv ? plan.split_tokens : 5000);
    ck_assert_int_lt((int64_t)(plan.cv_steps - 1) * plan.chunk_rows, plan.split_kv ? plan.split_tokens : 5000);
    const int64_t e = plan.cv_entries, m = plan.cv_rows, c = plan.chunk_rows, d = 128;
    const int64_t at[] = {plan.ws_cv_q_offset, plan.ws_cv_k_offset, plan.ws_cv_v_offset, plan.ws_cv_s_offset,
                          plan.ws_part_acc_offset, plan.ws_part_m_offset, plan.ws_part_l_offset, plan.workspace_bytes};
    const int64_t size[] = {4 * e * m * d, 4 * e * c * d, 4 * e * c * d, 4 * e * m * c, 4 * e * m * d, 4 * e * m, 4 * e * m};
    for (int i = 0; i < 7; ++i) {
        ck_assert_int_eq(at[i] % IFA_WORKSPACE_ALIGN, 0);
        ck_assert_int_ge(at[i + 1], at[i] + size[i]);
    }
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the softmax's work-group is a power of 2 (it reduces by halving) */
    plan_tuned("cv_work_group_size=48", &p, &pocl, &plan);
    ck_assert_int_eq(plan.cv_work_group_size, 32);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the budget bounds the K, V and score tiles */
    plan_tuned("cv_workspace_mib=1", &p, &pocl, &plan);
    ck_assert_int_le(4 * plan.cv_entries * plan.chunk_rows * (2 * 128 + plan.cv_rows), 1 << 20);
    ck_assert_int_eq(plan.chunk_rows % 16, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* batch 1 on the h100 profile splits, by equal splits even with per-batch lengths and global rowmax asked */
    p = problem(1, 32, 8, 128, 32768);
    p.template_request = IFA_TEMPLATE_CV, p.lengths_mode = IFA_LENGTHS_PER_BATCH;
    plan_tuned("split_rowmax=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.cv_entries, 8 * plan.max_splits);
    ck_assert_int_ge(plan.cv_entries, 132);
    ck_assert_int_eq(plan.cv_work_group_size, 64);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.cv_steps += 1);
    ck_plan_refuses(plan, bad.ws_cv_s_offset -= 256);
    ck_plan_refuses(plan, bad.template_id = IFA_TEMPLATE_ALL_VECTOR); /* the key and the cv fields disagree */
}
END_TEST

/* Several adjacent KV heads per work-group: only BSH/BSND in the vector shape without antiquant or cascade,
 * all of a position's KV heads or one (never a part of the row), all when their rows stay within
 * multi_head_rows, register tiles within one head, chunks within multi_head_chunk_bytes per tensor; the plan
 * check refuses anything else. */
START_TEST(multi_head_blocks) {
    /* avx2: 16 registers, the rows rule alone */
    ifa_problem p = problem(2, 24, 6, 64, 1000); /* G = 4 */
    p.layout = IFA_LAYOUT_BSND, p.seq_q = 2;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 6); /* 6 x 4 x 2 = 48 <= 64 */
    ck_assert_int_eq(plan.heads_per_group, 24);
    ck_assert_int_eq(ifa__tile_rows(&plan), 8); /* divides a head's 8 rows */
    ck_assert_int_eq(ifa__plan_blocks(&plan), 1);
    ck_assert_int_eq(plan.num_work_groups % 2, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.kv_heads_per_group = 4); /* does not divide 6 */
    ck_plan_refuses(plan, bad.kv_heads_per_group = 3, bad.heads_per_group = 12); /* half a row */
    p.seq_q = 3; /* 6 x 4 x 3 = 72 rows: one head, not the 2 or 3 that would fit 64 */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.heads_per_group, 4);
    setenv("IFA_TUNING", "multi_head_rows=72", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_eq(plan.kv_heads_per_group, 6);
    ck_assert_int_eq(ifa__tile_rows(&plan), 4); /* divides a head's 12 rows */
    /* 32 registers: all heads also need a head's slice >= 256 bytes (and a position's row of at least the row's
     * multi_head_min_row_bytes per tensor: 0 in the CPU row, set here through IFA_TUNING) */
    p = problem(1, 16, 16, 64, 4096); /* 128-byte slices */
    p.layout = IFA_LAYOUT_BSND;
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 16);
    ck_assert_int_eq(plan.prefetch_rows, 4); /* whole rows, 8 KiB of 2 KiB rows (G = 1: P.V's prefetch on) */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.prefetch_rows, 32); /* 4 KiB of 128-byte slices ahead */
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    setenv("IFA_TUNING", "multi_head_min_slice_bytes=128,multi_head_min_row_bytes=2048", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 16); /* 128-byte slices and 2 KiB rows: exactly at both */
    ck_assert_int_eq(plan.prefetch_rows, 4);       /* 8 KiB of 2 KiB rows (multi_head_prefetch_bytes) */
    setenv("IFA_TUNING", "multi_head_min_slice_bytes=129,multi_head_min_row_bytes=2048", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    setenv("IFA_TUNING", "multi_head_min_slice_bytes=128,multi_head_min_row_bytes=2049", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    setenv("IFA_TUNING", "strided_prefetch_bytes=0", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    setenv("IFA_TUNING", "prefetch_rows=0", 1); /* off stays off */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 0);
    unsetenv("IFA_TUNING");
    p.head_dim = 128, p.value_dim = 128; /* 256-byte slices, 4 KiB rows: all heads */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 16);
    ck_assert_int_eq(plan.prefetch_rows, 2); /* 8 KiB of 4 KiB rows: G = 1, P.V's next-chunk prefetch on */
    p = problem(1, 64, 8, 128, 4096); /* 256-byte slices, 2 KiB rows: all heads (G = 8: 8 KiB ahead, P.V's */
    p.layout = IFA_LAYOUT_BSH;                    /* next-chunk prefetch on up to 64 rows; Intel's row: 16 rows) */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.prefetch_rows, 4);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    setenv("IFA_TUNING", "multi_head_min_row_bytes=4096", 1); /* the 2026-11-25 minimum: one head */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.prefetch_rows, 16); /* 16 rows of 256-byte slices ahead */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    p.kv_dtype = IFA_DTYPE_INT4, p.antiquant = IFA_ANTIQUANT_PER_CHANNEL; /* one head, 64-byte slices: 64 rows */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 64);
    p.head_dim = p.value_dim = 16; /* 8-byte slices: the reach stops at 128 rows */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 128);
    p.layout = IFA_LAYOUT_BNSD; /* a head's rows are adjacent */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    /* a wide row (MHA, 32 KV heads x 128 fp16 = 8 KiB): the chunk shrinks to 16 rows, 128 KiB per tensor */
    p = problem(1, 32, 32, 128, 4096);
    p.layout = IFA_LAYOUT_BSND;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 32);
    ck_assert_int_eq(plan.chunk_rows, 16);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.kv_dtype = IFA_DTYPE_FLOAT8_E4M3; /* 4 KiB rows (16 registers: 128-byte slices keep all heads): 32 KiB, 8 */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 32);
    ck_assert_int_eq(plan.chunk_rows, 8);
    p.kv_dtype = IFA_DTYPE_FLOAT32; /* 16 KiB rows: 8, but never below the vector's 16 */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.chunk_rows, 16);
    p.kv_dtype = IFA_DTYPE_FLOAT16;
    plan_tuned("multi_head_chunk_bytes=0,multi_head_chunk_bytes_g1=0", &p, &pocl, &plan); /* G = 1: both */
    ck_assert_int_eq(plan.chunk_rows, 128);
    p.layout = IFA_LAYOUT_BNSD; /* one head per work-group: the row's chunk */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.chunk_rows, 128);
    p = problem(2, 24, 6, 64, 1000), p.seq_q = 2;
    p.layout = IFA_LAYOUT_BNSD; /* a head's rows are adjacent already */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    p.layout = IFA_LAYOUT_BSH, p.antiquant = IFA_ANTIQUANT_PER_CHANNEL, p.kv_dtype = IFA_DTYPE_INT8;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    p = problem(2, 24, 6, 64, 1000);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* the GPU's scalar shape */
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_plan_refuses(plan, bad.kv_heads_per_group = 2, bad.heads_per_group = 8);
}
END_TEST

/* The template rule: candidates in order with reasons, the tuning threshold, forcing, and refusals. */
START_TEST(template_choice) {
    ifa_problem p = problem(2, 64, 2, 64, 1000);
    ifa_tuning t = ifa__tuning_for(IFA_VENDOR_CPU);
    ifa_template_candidate c[IFA_TEMPLATE_CANDIDATES];
    int32_t chosen;
    t.cv_min_rows = 0; /* never by itself */
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_OK);
    ck_assert_int_eq(chosen, IFA_TEMPLATE_ALL_VECTOR);
    ck_assert_int_eq(c[0].template_id, IFA_TEMPLATE_CV);
    ck_assert(c[0].applicable && !c[0].chosen && c[1].chosen);
    ck_assert_ptr_nonnull(strstr(c[0].reason, "cv_min_rows = 0"));
    t.cv_min_rows = 32; /* G = 32 rows */
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_OK);
    ck_assert_int_eq(chosen, IFA_TEMPLATE_CV);
    ck_assert_ptr_nonnull(strstr(c[0].reason, "G x S1 = 32"));
    p.num_kv_heads = 4; /* G = 16 */
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_OK);
    ck_assert_int_eq(chosen, IFA_TEMPLATE_ALL_VECTOR);
    p.template_request = IFA_TEMPLATE_CV;
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_OK);
    ck_assert_int_eq(chosen, IFA_TEMPLATE_CV);
    ck_assert_ptr_nonnull(strstr(c[0].reason, "forced"));
    p.has_prefix = 1; /* the cascade runs only in all_vector */
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_INVALID_ATTRIBUTE);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "template_mode \"cv\" cannot run this case: the shared-prefix"));
    p.template_request = 0, t.cv_min_rows = 1;
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_OK);
    ck_assert_int_eq(chosen, IFA_TEMPLATE_ALL_VECTOR);
    ck_assert(!c[0].applicable);
    p.template_request = IFA_TEMPLATE_ALL_VECTOR, p.has_prefix = 0;
    ck_assert_int_eq(ifa__template_choose(&p, &t, c, &chosen), IFA_STATUS_OK);
    ck_assert_int_eq(chosen, IFA_TEMPLATE_ALL_VECTOR);
    /* the NVIDIA row as the H100 measured it with the lane shape in head groups (docs/templates.md): all_vector
     * at every G (cv_min_rows 0) */
    const ifa_tuning nv = ifa__tuning_for(IFA_VENDOR_NVIDIA);
    const struct { int64_t n, nkv; int32_t want; } rows[] = {
        {32, 8, IFA_TEMPLATE_ALL_VECTOR}, {8, 8, IFA_TEMPLATE_ALL_VECTOR}, {64, 8, IFA_TEMPLATE_ALL_VECTOR},
        {64, 4, IFA_TEMPLATE_ALL_VECTOR}, {128, 1, IFA_TEMPLATE_ALL_VECTOR}};
    for (int i = 0; i < 5; ++i) {
        ifa_problem g = problem(1, rows[i].n, rows[i].nkv, 128, 4096);
        ck_assert_int_eq(ifa__template_choose(&g, &nv, c, &chosen), IFA_STATUS_OK);
        ck_assert_int_eq(chosen, rows[i].want);
    }
}
END_TEST

START_TEST(plan_fits_local_memory) {
    /* G = 64 heads of D = 512 cannot share 48 KiB: the planner splits them into even head groups */
    ifa_problem p = problem(1, 64, 1, 512, 1000);
    ifa_plan plan;
    plan_tuned("cv_min_rows=0", &p, &h100, &plan); /* the all-vector template's rule (the NVIDIA row picks cv here) */
    ck_assert_int_gt(plan.head_groups, 1);
    ck_assert_int_ge((int64_t)plan.heads_per_group * plan.head_groups, 64);
    ck_assert_int_lt((int64_t)plan.heads_per_group * (plan.head_groups - 1), 64);
    ck_assert_int_le(plan.local_mem_bytes, h100.local_mem_bytes);
    ck_assert_int_eq(plan.num_work_groups, plan.head_groups);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the common GQA case keeps all heads together: K/V read once per KV head */
    p = problem(4, 32, 8, 128, 8192);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_assert_int_eq(plan.heads_per_group, 4);
    ck_assert_int_eq(plan.num_work_groups, 4 * 8 * plan.max_splits);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_assert_int_eq(plan.chunk_rows % plan.work_group_size, 0);
}
END_TEST

/* all_vector on a device whose local memory holds not one head's rows: refused where forced, cv otherwise
 * (device_limit_falls_back_to_cv) */
START_TEST(plan_refuses_what_cannot_fit) {
    ifa_device_facts tiny = {IFA_VENDOR_GENERIC_GPU, 4, 256, 0, 2048, 0};
    ifa_problem p = problem(1, 8, 8, 512, 100);
    p.template_request = IFA_TEMPLATE_ALL_VECTOR;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &tiny, &plan), IFA_STATUS_DEVICE_LIMIT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "local memory"));
    p.template_request = 0;
    ck_assert_int_eq(ifa__plan_make(&p, &tiny, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.template_id, IFA_TEMPLATE_CV);
}
END_TEST

START_TEST(plan_work_group_within_device) {
    ifa_device_facts small_wg = {IFA_VENDOR_NVIDIA, 8, 100, 0, 48 * 1024, 0};
    ifa_problem p = problem(2, 8, 2, 64, 100);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &small_wg, &plan), IFA_STATUS_OK);
    ck_assert_int_le(plan.work_group_size, 100);
    ck_assert_int_eq(plan.chunk_rows % plan.work_group_size, 0);
}
END_TEST

START_TEST(workspace_layout) {
    ifa_problem p = problem(5, 8, 2, 64, 100);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.workspace_bytes, 0);
    p.lengths_mode = IFA_LENGTHS_PER_BATCH;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.ws_lengths_bytes, 5 * 4);
    ck_assert_int_eq(plan.ws_lengths_offset % IFA_WORKSPACE_ALIGN, 0);
    ck_assert_int_ge(plan.workspace_bytes, plan.ws_lengths_offset + plan.ws_lengths_bytes);
}
END_TEST

/* Split-KV: every KV row of the longest batch lies in exactly one split, splits are whole chunks and never
 * shorter than the minimum, and the split count is the smallest that fills the device. */
static void check_split_shape(const ifa_plan *plan, int64_t max_len, int32_t min_tokens) {
    ck_assert_int_eq(plan->split_kv, 1); /* partial rowmax is the default row */
    ck_assert_int_ge(plan->max_splits, 2);
    ck_assert_int_eq(plan->split_tokens % plan->chunk_rows, 0);
    ck_assert_int_ge(plan->split_tokens, min_tokens);
    ck_assert_int_ge((int64_t)plan->split_tokens * plan->max_splits, max_len);
    ck_assert_int_lt((int64_t)plan->split_tokens * (plan->max_splits - 1), max_len);
    ck_assert_int_eq(ifa__plan_check(plan), IFA_STATUS_OK);
}

START_TEST(split_kv_decisions) {
    ifa_plan plan;
    /* batch 1, 32K tokens: 8 blocks cannot fill 132 units, so split until every unit is busy */
    ifa_problem p = problem(1, 32, 8, 128, 32768);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    check_split_shape(&plan, 32768, 512);
    ck_assert_int_ge(plan.num_work_groups, 132);
    ck_assert_int_eq(plan.tiling_key / 10000000 % 10, 1);
    ck_assert_int_ge(plan.workspace_bytes, plan.ws_part_l_offset + 4 * 32 * plan.max_splits);
    ck_assert_int_eq(plan.ws_part_acc_offset % IFA_WORKSPACE_ALIGN, 0);
    ck_assert_int_ge(plan.ws_part_m_offset, plan.ws_part_acc_offset + 4 * 32 * plan.max_splits * 128);
    ck_assert_int_ge(plan.ws_part_l_offset, plan.ws_part_m_offset + 4 * 32 * plan.max_splits);
    /* enough blocks already (1024 against the NVIDIA row's 2 waves of 132): no split */
    p = problem(128, 32, 8, 128, 8192);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 0);
    ck_assert_int_eq(plan.max_splits, 1);
    /* too short to split into two splits of at least 512 rows */
    p = problem(1, 32, 8, 128, 1023);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 0);
    p = problem(1, 32, 8, 128, 1024);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    check_split_shape(&plan, 1024, 512);
    ck_assert_int_eq(plan.max_splits, 2);
    /* 33 blocks (G = 8 in one group of the matrix shape) need 8 splits to fill 132 units x 2 waves (the NVIDIA
     * row's split_waves) = 264 slots; in the lane shape's head groups of 4 rows, 66 blocks need 8 to fill its
     * 4 waves (lane_split_waves) = 528; each shape under the other's waves: 16 and 4 */
    p = problem(33, 8, 1, 128, 65536);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    check_split_shape(&plan, 65536, 512);
    ck_assert_int_eq(plan.mma, 5);
    ck_assert_int_eq(plan.max_splits, 8);
    plan_tuned("mma=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 2);
    ck_assert_int_eq(plan.max_splits, 8);
    plan_tuned("split_waves=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.max_splits, 16);
    plan_tuned("mma=0,lane_split_waves=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.max_splits, 4);
    plan_tuned("mma=0,lane_split_waves=0", &p, &h100, &plan); /* 0: split_waves */
    ck_assert_int_eq(plan.max_splits, 4);
    /* with balanced units off, the longest batch sets the equal splits */
    p = problem(2, 8, 8, 64, 10000);
    p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 5000, p.total_length = 5001;
    setenv("IFA_TUNING", "balance_milli=1000000", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    check_split_shape(&plan, 5000, 512);
    /* the tuning row picks the algorithm: global rowmax is key value 2 */
    setenv("IFA_TUNING", "split_rowmax=2", 1);
    p = problem(1, 32, 8, 128, 32768);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_eq(plan.split_kv, 2);
    ck_assert_int_eq(plan.tiling_key / 10000000 % 10, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the 2-core CPU is filled by the blocks (BNSD: one KV head per work-group) */
    p = problem(1, 32, 8, 128, 32768);
    p.layout = IFA_LAYOUT_BNSD;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 0);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    /* BSH with one KV head per work-group (the 2026-11-25 minimum row of 4 KiB on 32 registers):
     * the 8 blocks fill both cores */
    p.layout = IFA_LAYOUT_BSH;
    setenv("IFA_TUNING", "multi_head_min_row_bytes=4096", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.split_kv, 0);
    /* all 8 KV heads (32 query rows) in one work-group (the CPU row, 32 or 16 registers): the KV is split to
     * fill both cores */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.heads_per_group, 32);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.max_splits, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
}
END_TEST

/* The CPU row's split floor by work (split_min_work, 4096 x 1024 multiply-adds): a work-group whose key row costs
 * much splits sequences shorter than split_min_tokens' 2 x 1024 rows; one of few query rows keeps that floor. */
START_TEST(split_floor_by_work) {
    ifa_plan plan;
    /* DeepSeek's MLA at G = 128 (128 x 1088 multiply-adds a key row): 31 rows would do, each split is whole chunks */
    ifa_problem p = bsnd_problem(1, 128, 1, 576, 512);
    p.value_dim = 512;
    const ifa_tuning t = ifa__tuning_for(IFA_VENDOR_CPU);
    ck_assert_int_eq(t.split_min_work, 4096);
    ck_assert_int_eq(ifa__split_floor(&p, &t, 128), 31);
    ck_assert_int_eq(ifa__split_floor(&p, &t, 16), 241);
    ck_assert_int_eq(ifa__split_floor(&p, &t, 1), 1024);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.heads_per_group, 128);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.max_splits, 2);
    ck_assert_int_eq(plan.split_tokens, 256);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("split_min_work=0", &p, &pocl, &plan); /* the rows' floor alone: 512 < 2 x 1024 */
    ck_assert_int_eq(plan.split_kv, 0);
    /* G = 16: 241 rows a split, so 512 splits in two and 480 does not */
    p = bsnd_problem(1, 16, 1, 576, 512);
    p.value_dim = 512;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.max_splits, 2);
    p.max_length = p.uniform_length = p.total_length = 480;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 0);
    /* G = 16 at D = 128 (4096 a key row): split_min_tokens' 1024 either way */
    p = problem(1, 16, 1, 128, 2047);
    p.layout = IFA_LAYOUT_BNSD;
    ck_assert_int_eq(ifa__split_floor(&p, &t, 16), 1024);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 0);
    /* the GPU rows leave it off */
    ck_assert_int_eq(ifa__tuning_for(IFA_VENDOR_NVIDIA).split_min_work, 0);
    ck_assert_int_eq(ifa__tuning_for(IFA_VENDOR_GENERIC_GPU).split_min_work, 0);
}
END_TEST

/* Skewed lengths (32768, 16, 16, 16): equal splits leave the long batch's work on few units; balanced
 * units cut the cost line evenly, and the plan says how even. */
START_TEST(balanced_units) {
    ifa_problem p = problem(4, 32, 8, 128, 32768);
    p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 32768, p.total_length = 32768 + 3 * 16;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 3);
    ck_assert_int_eq(plan.units, 132 * 2); /* the NVIDIA row's 2 waves */
    ck_assert_int_eq(plan.num_work_groups, plan.units);
    ck_assert_int_eq(plan.total_cost, (32768 + 3 * 16) * 8 + 4 * 8 * plan.block_cost_rows);
    ck_assert_int_le(plan.load_ratio_milli, 1100);
    ck_assert_int_eq(plan.tiling_key / 10000000 % 10, 3);
    ck_assert_int_eq(plan.ws_prefix_offset % IFA_WORKSPACE_ALIGN, 0);
    ck_assert_int_ge(plan.ws_part_acc_offset, plan.ws_prefix_offset + 8 * 5);
    ck_assert_int_ge(plan.workspace_bytes, plan.ws_part_l_offset + 4 * 2 * plan.units * plan.heads_per_group);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the NVIDIA row keeps the combine kernel for balanced units until a card times the last piece's combine
     * (fused_balanced 0); under the equal splits' cap of 8192 partial values the long batch's blocks, cut into ~34
     * pieces, still hold too many for it; at fused_balanced 1 the last piece merges them */
    ck_assert_int_eq(ifa__tuning_for(IFA_VENDOR_NVIDIA).fused_balanced, 0);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_assert_int_eq(plan.combine_counters, 0);
    plan_tuned("fused_balanced=8192", &p, &h100, &plan);
    ck_assert_int_eq(plan.split_kv, 3);
    ck_assert_int_eq(plan.fused_combine, 0);
    plan_tuned("fused_balanced=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.split_kv, 3);
    ck_assert_int_eq(plan.fused_combine, 1);
    ck_assert_int_eq(plan.combine_counters, 4 * ifa__plan_blocks(&plan));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* without balancing the same case is far from even (at the row's 2 waves: 4 even out the equal splits) */
    setenv("IFA_TUNING", "balance_milli=1000000,split_waves=2", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_ne(plan.split_kv, 3);
    ck_assert_int_gt(plan.load_ratio_milli, 1100);
    /* even lengths need no balancing (1024 blocks fill the 528 slots unsplit) */
    p = problem(128, 32, 8, 128, 4096);
    p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 4096, p.total_length = 128 * 4000;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, 0);
    ck_assert_int_le(plan.load_ratio_milli, 1100);
}
END_TEST

/* The last piece's combine for balanced units (fused_balanced): the CPU row's 1 fuses the MLA pair that measured
 * 0.92x (one long and one short batch on 2 cores); not where a unit's stretch is empty (fewer cost positions than
 * units: its pieces never count), nor at 0; the plan check refuses a fused plan with empty stretches. */
START_TEST(fused_balanced_rule) {
    ifa_problem p = problem(2, 16, 1, 576, 4096);
    p.layout = IFA_LAYOUT_BNSD, p.value_dim = 512;
    p.q_dtype = p.kv_dtype = p.out_dtype = IFA_DTYPE_BFLOAT16;
    p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 4096, p.total_length = 4096 + 1024;
    ck_assert_int_eq(ifa__tuning_for(IFA_VENDOR_CPU).fused_balanced, 1);
    ck_assert_int_eq(ifa__tuning_for(IFA_VENDOR_CPU_INTEL).fused_balanced, 1);
    ck_assert_int_eq(ifa__tuning_for(IFA_VENDOR_GENERIC_GPU).fused_balanced, 0);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_BALANCED);
    ck_assert_int_eq(plan.units, 2);
    ck_assert_int_eq(plan.fused_combine, 1);
    ck_assert_int_eq(plan.combine_counters, 2 * ifa__plan_blocks(&plan));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the plan check: a fused plan's stretches must all hold a cost position */
    ck_plan_refuses(plan, bad.total_cost = bad.units - 1);
    /* and a block's cost must fit the int32 counter its pieces add their cost positions to */
    ifa_plan bad = plan;
    bad.problem.max_length = (int64_t)INT32_MAX - bad.block_cost_rows + 1;
    ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_INVALID_PLAN);
    bad.fused_combine = 0, bad.combine_counters = 0; /* the same plan through the combine kernel */
    ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_OK);
    plan_tuned("fused_balanced=0", &p, &pocl, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_BALANCED);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_assert_int_eq(plan.combine_counters, 0);
    /* a threshold: the longest block (4096 + 32 rows of cost over a 2592-position stretch) is cut into at most 3
     * pieces of 16 rows x 512 values */
    plan_tuned("fused_balanced=24576", &p, &pocl, &plan);
    ck_assert_int_eq(plan.fused_combine, 1);
    plan_tuned("fused_balanced=24575", &p, &pocl, &plan);
    ck_assert_int_eq(plan.fused_combine, 0);
    /* lengths 1 and 0 at block_cost_rows 1 on 64 units: 3 cost positions for 64 stretches, most of them empty */
    static const ifa_device_facts many = {IFA_VENDOR_CPU, 64, 4096, 0, 2 * 1024 * 1024, 0};
    p = problem(2, 8, 1, 64, 16);
    p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 1, p.total_length = 1;
    plan_tuned("block_cost_rows=1,fused_balanced=1", &p, &many, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_BALANCED);
    ck_assert_int_lt(plan.total_cost, plan.units);
    ck_assert_int_eq(plan.fused_combine, 0);
}
END_TEST

/* The cut points cover the cost line exactly once, in order, in stretches that differ by at most one,
 * without overflow at the largest totals (B = 65536, N_kv = 256, S = 2^31 - 1 gives ~2^55). */
START_TEST(unit_cuts_partition_the_cost_line) {
    const int64_t totals[] = {1, 7, 263, 264, 1000003, (int64_t)65536 * 256 * 2147483647LL};
    const int64_t unit_counts[] = {2, 3, 264, 1024};
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; ++i) {
        for (size_t j = 0; j < sizeof unit_counts / sizeof unit_counts[0]; ++j) {
            const int64_t w = totals[i], u = unit_counts[j];
            ck_assert_int_eq(ifa__unit_start(w, u, 0), 0);
            ck_assert_int_eq(ifa__unit_start(w, u, u), w);
            int64_t lo = INT64_MAX, hi = 0;
            for (int64_t k = 0; k < u; ++k) {
                const int64_t len = ifa__unit_start(w, u, k + 1) - ifa__unit_start(w, u, k);
                ck_assert_int_ge(len, 0);
                if (len < lo) lo = len;
                if (len > hi) hi = len;
            }
            ck_assert_int_le(hi - lo, 1);
        }
    }
}
END_TEST

/* ifa_common.cl's ifa_unit_of: the largest u with start(u) <= x, by bisection over q u + r u / units. */
static int64_t unit_of(int64_t total, int64_t units, int64_t x) {
    const int64_t q = total / units, r = total % units;
    int64_t lo = 0, hi = units;
    while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        const int64_t f = units <= 65536 ? (int64_t)((uint32_t)(r * mid) / (uint32_t)units) : r * mid / units;
        if (q * mid + f <= x) lo = mid; else hi = mid;
    }
    return lo;
}

/* Walks the units exactly as ifa_attention_begin.clh does (BALANCED=1) and counts how often each KV row of each
 * block is processed: every row exactly once, and every block touched by at least one unit (so its output
 * is written, whole or through the combine), for skewed lengths including zeros.
 * Also what the fused combine of balanced units relies on (ifa_attention_end.clh, FUSED with BALANCED): a cut block's
 * pieces add up to its cost (each piece counts its cost positions; the one completing the count combines), and
 * the slots the last piece reads, units unit_of(pk) to unit_of(pe - 1) (slot 2u, or 2u + 1 for the first unit
 * where the block is its last piece: ifa_common.cl's ifa_pieces_of and ifa_piece_slot, which the combine kernel
 * shares), are exactly the slots its pieces wrote (ifa_unit_slot). */
START_TEST(balanced_walk_covers_every_row_once) {
    static const int64_t lens[] = {32768, 16, 0, 16, 1, 4095, 0};
    const int64_t nb = 7, kb = 3, c0 = 32, units = 264;
    int64_t prefix[8] = {0};
    for (int64_t b = 0; b < nb; ++b) prefix[b + 1] = prefix[b] + (lens[b] + c0) * kb;
    const int64_t total = prefix[nb];
    static int32_t seen[7][3][32768];
    static int32_t touched[7][3];
    static int64_t counted[7][3], slots[7][3][2 * 264];
    memset(seen, 0, sizeof seen);
    memset(touched, 0, sizeof touched);
    memset(counted, 0, sizeof counted);
    memset(slots, 0, sizeof slots);
    for (int64_t u = 0; u < units; ++u) {
        const int64_t x1 = ifa__unit_start(total, units, u + 1);
        int piece = 0;
        for (int64_t x = ifa__unit_start(total, units, u); x < x1; ++piece) {
            int64_t b = 0;
            while (prefix[b + 1] <= x) ++b;
            const int64_t bcost = lens[b] + c0, blk = (x - prefix[b]) / bcost;
            const int64_t pk = prefix[b] + blk * bcost, pe = pk + bcost;
            const int64_t cut0 = x - pk, cut1 = (x1 < pe ? x1 : pe) - pk;
            const int64_t first = cut0 - c0 < 0 ? 0 : cut0 - c0, end = cut1 - c0 < 0 ? 0 : cut1 - c0;
            ck_assert_int_le(end, lens[b]);
            for (int64_t r = first; r < end; ++r) seen[b][blk][r]++;
            touched[b][blk]++;
            if (!(cut0 == 0 && pe <= x1)) { /* a partial: its slot, its cost positions */
                counted[b][blk] += cut1 - cut0;
                slots[b][blk][2 * u + (piece == 0 ? 0 : 1)]++;
            }
            x = pe;
        }
    }
    for (int64_t b = 0; b < nb; ++b)
        for (int64_t k = 0; k < kb; ++k) {
            ck_assert_int_ge(touched[b][k], 1);
            for (int64_t r = 0; r < lens[b]; ++r) ck_assert_int_eq(seen[b][k][r], 1);
            if (touched[b][k] == 1) {
                ck_assert_int_eq(counted[b][k], 0); /* one unit held the block whole */
                continue;
            }
            const int64_t bcost = lens[b] + c0, pk = prefix[b] + k * bcost, pe = pk + bcost;
            ck_assert_int_eq(counted[b][k], bcost);
            const int64_t uf = unit_of(total, units, pk), ns = unit_of(total, units, pe - 1) - uf + 1;
            ck_assert_int_eq(ns, touched[b][k]);
            const int64_t skip = ifa__unit_start(total, units, uf) < pk;
            for (int64_t s = 0; s < ns; ++s) {
                const int64_t slot = 2 * (uf + s) + (s == 0 ? skip : 0);
                ck_assert_int_eq(slots[b][k][slot], 1);
            }
        }
    /* the search against ifa__unit_start at every cost position of a small line and the ends of this one */
    for (int64_t t = 264; t < 300; ++t)
        for (int64_t x = 0; x < t; ++x) {
            const int64_t u = unit_of(t, 264, x);
            ck_assert(ifa__unit_start(t, 264, u) <= x && (u == 263 || ifa__unit_start(t, 264, u + 1) > x));
        }
    ck_assert_int_eq(unit_of(total, units, 0), 0);
    ck_assert_int_eq(unit_of(total, units, total - 1), units - 1);
    /* both sides of the 32-bit step's limit (r u < 2^32 up to 65536 units, the largest remainder), and a line
     * near int64's end: each stretch's first and last positions and one inside */
    static const int64_t wide[][2] = {{65536, 65536 * 7 + 65535},
                                      {65537, 65537 * 3 + 65536},
                                      {100003, 100003 * 11 + 99999},
                                      {264, INT64_MAX / 2 + 263}};
    for (size_t w = 0; w < sizeof wide / sizeof wide[0]; ++w) {
        const int64_t n = wide[w][0], t = wide[w][1];
        for (int64_t u = 0; u < n; u += 1 + u / 7) {
            const int64_t a = ifa__unit_start(t, n, u), e = ifa__unit_start(t, n, u + 1);
            ck_assert_int_lt(a, e);
            ck_assert_int_eq(unit_of(t, n, a), u);
            ck_assert_int_eq(unit_of(t, n, e - 1), u);
            ck_assert_int_eq(unit_of(t, n, a + (e - a) / 2), u);
        }
    }
}
END_TEST

START_TEST(tuning_env_override) {
    ifa_problem p = problem(1, 4, 4, 64, 100);
    p.layout = IFA_LAYOUT_BNSD; /* the row's prefetch_rows as it is */
    ifa_plan plan;
    setenv("IFA_TUNING", "work_group_size=32,chunk_rows=96,bogus=7", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_eq(plan.work_group_size, 32);
    ck_assert_int_eq(plan.chunk_rows, 96);
    /* 0 is accepted where it means off (prefetch_rows), refused elsewhere (chunk_rows keeps its row's value) */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    setenv("IFA_TUNING", "prefetch_rows=0,chunk_rows=0", 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    unsetenv("IFA_TUNING");
    ck_assert_int_eq(plan.prefetch_rows, 0);
    ck_assert_int_eq(plan.chunk_rows, 128);
}
END_TEST

/* IFA_TUNING's parser as ifa-bench's --variant uses it: the good entries apply in order (later ones win),
 * each bad one (unknown key, no '=', a value that is not all digits, out of range) is skipped, and the first bad
 * one is named. */
/* Every row reads back from its own IFA_TUNING form: the parser's least value for each key admits what the rows
 * hold (the NVIDIA row's multi_head_rows 0, "one KV head per work-group", was refused as IFA_TUNING, so that the row
 * printed by ifa-tiling could not be handed back to a soak), and the form names every field. */
START_TEST(tuning_rows_round_trip) {
    char saved[2048] = "";
    const char *env = getenv("IFA_TUNING");
    const int had = env != NULL;
    if (had) snprintf(saved, sizeof saved, "%s", env);
    unsetenv("IFA_TUNING"); /* the rows themselves */
    for (int32_t v = 0; v < IFA_VENDOR_COUNT_; ++v) {
        const ifa_tuning row = ifa__tuning_for(v);
        char text[2048], err[200] = "";
        ck_assert_int_eq(ifa__tuning_format(&row, text, sizeof text), 0);
        ifa_tuning back;
        memset(&back, 0xff, sizeof back); /* every field must be written */
        back.vendor = row.vendor;
        const int st = ifa__tuning_apply(&back, text, err, sizeof err);
        ck_assert_msg(st == 0, "row %d: %s", (int)v, err);
        ck_assert_msg(memcmp(&back, &row, sizeof row) == 0, "row %d does not read back from \"%s\"", (int)v, text);
    }
    char small[16];
    const ifa_tuning cpu = ifa__tuning_for(IFA_VENDOR_CPU);
    ck_assert_int_eq(ifa__tuning_format(&cpu, small, sizeof small), -1);
    if (had) setenv("IFA_TUNING", saved, 1);
}
END_TEST

START_TEST(tuning_apply_reports_bad_entries) {
    ifa_tuning t = ifa__tuning_for(IFA_VENDOR_CPU);
    const ifa_tuning row = t;
    char err[200] = "";
    ck_assert_int_eq(ifa__tuning_apply(&t, "chunk_rows=32,prefetch_rows=0,chunk_rows=48,", err, sizeof err), 0);
    ck_assert_int_eq(t.chunk_rows, 48);
    ck_assert_int_eq(t.prefetch_rows, 0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(ifa__tuning_apply(&t, "", err, sizeof err), 0);
    t = row;
    ck_assert_int_eq(ifa__tuning_apply(&t, "chunk_row=8,pv_block=2,bogus", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "\"chunk_row=8\""));
    ck_assert_int_eq(t.chunk_rows, row.chunk_rows);
    ck_assert_int_eq(t.pv_block, 2); /* after the bad entry */
    const char *bad[] = {"chunk_rows=0", "chunk_rows=12x", "chunk_rows=", "chunk_rows=2000000", "prefetch_rows=-1", "=4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        t = row;
        err[0] = 0;
        ck_assert_int_eq(ifa__tuning_apply(&t, bad[i], err, sizeof err), -1);
        ck_assert_int_eq(t.chunk_rows, row.chunk_rows);
        ck_assert_int_eq(t.prefetch_rows, row.prefetch_rows);
        ck_assert_msg(err[0] != 0, "%s: no message", bad[i]);
    }
    ck_assert_ptr_nonnull(strstr(err, "\"=4\""));
    t = row;
    ck_assert_int_eq(ifa__tuning_apply(&t, "chunk_rows=0", err, sizeof err), -1);
    ck_assert_str_eq(err, "tuning key chunk_rows takes an integer in [1, 1048576], not \"0\"");
    ck_assert_int_eq(ifa__tuning_apply(&t, "spread_prefetch=0", NULL, 0), 0);
    ck_assert_int_eq(t.spread_prefetch, 0);
}
END_TEST

/* 8-wide loads: only in the work-group shape when the tuning row asks, with every (query row, 8 columns)
 * slice of P.V in the work-group, D a multiple of 8 and no int4; their accumulator slices are in the local
 * memory count; the plan check refuses them anywhere else. */
START_TEST(vector_loads_rule) {
    test_tuning_push("lanes=0,mma=0"); /* the NVIDIA row's matrix and lane shapes come first where they apply */
    ifa_problem p = problem(1, 32, 8, 128, 8192); /* G = 4: 4 x 16 slices <= 128 work-items */
    ifa_plan plan, off;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &off), IFA_STATUS_OK);
    ck_assert_int_eq(off.vector_loads, 0); /* off in the GPU rows until measured */
    test_tuning_push("vector_loads=1");
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_loads, 8);
    ck_assert_int_eq(plan.local_mem_bytes, off.local_mem_bytes + ifa__vector_loads_local_bytes(4, 128, 128));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ifa_problem q = problem(1, 128, 8, 128, 8192); /* G = 16: 256 slices > 128 */
    ck_assert_int_eq(ifa__plan_make(&q, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_loads, 0);
    q = problem(1, 32, 8, 100, 8192); /* D not a multiple of 8 */
    ck_assert_int_eq(ifa__plan_make(&q, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_loads, 0);
    q = p, q.kv_dtype = IFA_DTYPE_INT4, q.antiquant = IFA_ANTIQUANT_PER_CHANNEL;
    ck_assert_int_eq(ifa__plan_make(&q, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_loads, 0);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK); /* the vector shape has its own loads */
    ck_assert_int_eq(plan.vector_loads, 0);
    test_tuning_pop();
    ck_plan_refuses(plan, bad.vector_loads = 8);
    plan_tuned("vector_loads=1", &p, &h100, &plan);
    ck_plan_refuses(plan, bad.vector_loads = 4);
    ck_plan_refuses(plan, bad.work_group_size = 32, bad.chunk_rows = 128); /* 64 slices > 32 work-items */
    test_tuning_pop();
}
END_TEST

/* The key tile: with 8-wide loads and 16-bit or int8 K/V where the tile fits the local memory and holds P.V's
 * slices at the end (G = 4 and G = 8 at D = 128 with 64 work-items and 64-row chunks, G = 4 at 128 and 128;
 * not G = 16), counted in the local memory, at G = 8 where 8-wide loads alone cannot go (8 x 16 slices > 64
 * work-items); never for other dtypes or without vector_loads; the plan check refuses it elsewhere, and beside
 * the lane shape. */
START_TEST(key_tile_rule) {
    test_tuning_push("lanes=0,mma=0"); /* the NVIDIA row's matrix and lane shapes come first where they apply */
    static const char *const tile64 = "vector_loads=1,key_tile=1,work_group_size=64,chunk_rows=64";
    ifa_problem p = problem(1, 32, 8, 128, 8192);
    ifa_plan plan;
    plan_tuned(tile64, &p, &h100, &plan);
    ck_assert_int_eq(plan.key_tile, 1);
    ck_assert_int_eq(plan.local_mem_bytes, ifa__all_vector_local_bytes(4, 1, 128, 128, 64) +
                                               ifa__key_tile_local_bytes(128, 2, 64));
    ck_assert_int_eq(ifa__key_tile_local_bytes(128, 2, 64), 16 * 64 * 17);
    ck_assert_int_eq(ifa__key_tile_local_bytes(128, 1, 64), 16 * 64 * 9);
    ck_assert_int_le(plan.local_mem_bytes, h100.local_mem_bytes);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.lanes = 4);
    ck_plan_refuses(plan, bad.vector_loads = 0);
    ck_plan_refuses(plan, bad.key_tile = 2);
    plan_tuned("vector_loads=1,key_tile=1", &p, &h100, &plan); /* 128 x 128: 34.8 KB of tile beside 9.3 */
    ck_assert_int_eq(plan.key_tile, 1);
    ck_assert_int_le(plan.local_mem_bytes, h100.local_mem_bytes - 1024);
    ifa_problem g = problem(1, 64, 8, 128, 8192); /* G = 8 (all_vector asked for: the NVIDIA row gives it cv) */
    plan_tuned("vector_loads=1,work_group_size=64,chunk_rows=64,cv_min_rows=0", &g, &h100, &plan);
    ck_assert_int_eq(plan.vector_loads, 0);
    plan_tuned("vector_loads=1,key_tile=1,work_group_size=64,chunk_rows=64,cv_min_rows=0", &g, &h100, &plan);
    ck_assert_int_eq(plan.vector_loads, 8);
    ck_assert_int_eq(plan.key_tile, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.key_tile = 0); /* 8-wide loads alone: 8 x 16 slices > 64 work-items */
    g = problem(1, 128, 8, 128, 8192); /* G = 16: its slices (32 KB) do not fit the 17 KB tile */
    plan_tuned("vector_loads=1,key_tile=1,work_group_size=64,chunk_rows=64,cv_min_rows=0", &g, &h100, &plan);
    ck_assert_int_eq(plan.key_tile, 0);
    p.kv_dtype = IFA_DTYPE_BFLOAT16;
    plan_tuned(tile64, &p, &h100, &plan);
    ck_assert_int_eq(plan.key_tile, 1);
    p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = IFA_ANTIQUANT_PER_CHANNEL; /* 16 elements a word */
    plan_tuned(tile64, &p, &h100, &plan);
    ck_assert_int_eq(plan.key_tile, 1);
    ck_assert_int_eq(plan.local_mem_bytes, ifa__all_vector_local_bytes(4, 1, 128, 128, 64) +
                                               ifa__key_tile_local_bytes(128, 1, 64));
    p.kv_dtype = IFA_DTYPE_FLOAT8_E4M3; /* 1-byte floats: not in the tile */
    plan_tuned(tile64, &p, &h100, &plan);
    ck_assert_int_eq(plan.key_tile, 0);
    p.antiquant = IFA_ANTIQUANT_NONE;
    p.kv_dtype = IFA_DTYPE_FLOAT32, p.q_dtype = IFA_DTYPE_FLOAT32, p.out_dtype = IFA_DTYPE_FLOAT32;
    plan_tuned(tile64, &p, &h100, &plan);
    ck_assert_int_eq(plan.vector_loads, 8);
    ck_assert_int_eq(plan.key_tile, 0);
    ck_plan_refuses(plan, bad.key_tile = 1);
    p = problem(1, 32, 8, 128, 8192);
    plan_tuned("key_tile=1,work_group_size=64,chunk_rows=64", &p, &h100, &plan); /* no 8-wide loads */
    ck_assert_int_eq(plan.key_tile, 0);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* off in the NVIDIA row (the lane shape won) */
    ck_assert_int_eq(plan.key_tile, 0);
    test_tuning_pop();
}
END_TEST

/* The lane shape: where the row asks for it, with any K/V type, D a multiple of 8 (D / 8 up to a power of two
 * lanes, at most 32, dividing the work-group; past 256 columns more than one chunk of 8 a lane) and at most 8 query
 * rows' chunks; instead of 8-wide loads and the key tile; its local memory
 * (each lane group's maxima and sums, and on every device but NVIDIA's the lanes' partial dot products) counted;
 * more rows per KV head go in even groups of up to 8 rows where the row asks (lane_head_groups);
 * the plan check refuses it beside 8-wide loads, past its rule or off its range; on in the NVIDIA row at 2 rows a
 * step (the H100's measurement, docs/tiling.md), off in the others; its next-step loads (lane_prefetch) only with
 * it, and so the query's columns from local memory (lane_q_local). */
START_TEST(lanes_rule) {
    test_tuning_push("mma=0"); /* the lane shape where the NVIDIA row takes the matrix shape */
    static const char *const lanes4 = "lanes=4,vector_loads=1,key_tile=1,small_grid_work_group_size=0";
    ifa_problem p = problem(1, 32, 8, 128, 8192);
    ifa_plan plan;
    plan_tuned(lanes4, &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.vector_loads, 0);
    ck_assert_int_eq(plan.key_tile, 0);
    /* 128 work-items, 16 lanes a row: 8 groups x 4 rows x (max, sum); no partials with shuffles */
    ck_assert_int_eq(ifa__lanes_local_bytes(4, 128, 128, 4, 1), 8 * 8 * 4);
    ck_assert_int_eq(ifa__lanes_local_bytes(4, 128, 128, 4, 0), 8 * 8 * 4 + 4 * 128 * 4 * 4);
    ck_assert_int_eq(plan.local_mem_bytes, ifa__all_vector_local_bytes(4, 1, 128, 128, 128) +
                                               ifa__lanes_local_bytes(4, 128, 128, 4, 1));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.lane_prefetch, 0);
    ck_plan_refuses(plan, bad.lanes = 9);
    ck_plan_refuses(plan, bad.lane_q_local = 2);
    ck_plan_refuses(plan, bad.lane_prefetch = 2);
    ck_plan_refuses(plan, bad.vector_loads = 8);
    plan_tuned("lanes=4,lane_prefetch=1", &p, &h100, &plan); /* the next step's loads ahead: with the lane shape only */
    ck_assert_int_eq(plan.lane_prefetch, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("lanes=0,lane_prefetch=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lane_prefetch, 0);
    ck_plan_refuses(plan, bad.lane_prefetch = 1);
    plan_tuned("lanes=0,lane_q_local=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lane_q_local, 0);
    ck_plan_refuses(plan, bad.lane_q_local = 1);
    plan_tuned("lanes=4,lane_q_local=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lane_q_local, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned(lanes4, &p, &pocl, &plan); /* PoCL's row is the vector shape: never */
    ck_assert_int_eq(plan.lanes, 0);
    plan_tuned("lanes=4,vector_width=1,work_group_size=32,chunk_rows=32", &p, &pocl, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.local_mem_bytes, ifa__all_vector_local_bytes(4, 1, 128, 128, 32) +
                                               ifa__lanes_local_bytes(4, 128, 32, 4, 0));
    p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = IFA_ANTIQUANT_PER_TOKEN;
    plan_tuned(lanes4, &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    /* every K/V type: float8, int4 and fp32 too (the kernel's ifa_raw8 for each) */
    static const ifa_dtype other_kv[] = {IFA_DTYPE_FLOAT8_E4M3, IFA_DTYPE_FLOAT8_E5M2, IFA_DTYPE_INT4, IFA_DTYPE_FLOAT32};
    for (size_t i = 0; i < sizeof other_kv / sizeof other_kv[0]; ++i) {
        p.kv_dtype = other_kv[i];
        p.antiquant = other_kv[i] == IFA_DTYPE_INT4 ? IFA_ANTIQUANT_PER_CHANNEL : IFA_ANTIQUANT_NONE;
        plan_tuned(lanes4, &p, &h100, &plan);
        ck_assert_int_eq(plan.lanes, 4);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    }
    /* D / 8 up to a power of two: 10, 12 and 14 lanes' work on 16, 6 on 8, 25 on 32 (Phi-2's D = 80, Phi-3's 96) */
    ck_assert_int_eq(ifa__lanes_per_row(8), 1);
    ck_assert_int_eq(ifa__lanes_per_row(48), 8);
    ck_assert_int_eq(ifa__lanes_per_row(64), 8);
    ck_assert_int_eq(ifa__lanes_per_row(80), 16);
    ck_assert_int_eq(ifa__lanes_per_row(128), 16);
    ck_assert_int_eq(ifa__lanes_per_row(200), 32);
    ck_assert_int_eq(ifa__lanes_per_row(576), 32); /* a warp a row at most: 3 chunks of 8 columns a lane */
    ck_assert_int_eq(ifa__lanes_local_bytes(4, 80, 128, 4, 1), 8 * 8 * 4); /* 8 groups of 16 lanes, as at D = 128 */
    static const int64_t odd_d[] = {80, 96, 112, 200};
    for (size_t i = 0; i < sizeof odd_d / sizeof odd_d[0]; ++i) {
        p = problem(1, 32, 8, odd_d[i], 8192);
        plan_tuned(lanes4, &p, &h100, &plan);
        ck_assert_int_eq(plan.lanes, 4);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    }
    p = problem(1, 32, 8, 84, 8192); /* not a multiple of 8: a lane's 8 columns */
    plan_tuned(lanes4, &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 0);
    p = problem(1, 32, 8, 264, 8192); /* 33 lanes' work: 2 chunks a lane, 4 rows x 2 chunks in registers */
    plan_tuned(lanes4, &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* 8 rows x 2 chunks: 2 head groups of 4 under lane_head_groups, else one group with the query's columns read
     * from local memory (16 rows' chunks), the plan check refusing it without */
    p = problem(1, 64, 8, 264, 8192);
    plan_tuned("lanes=4,cv_min_rows=0,lane_head_groups=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(plan.lane_q_local, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.lane_q_local = 0);
    p = problem(1, 128, 8, 264, 8192); /* 16 rows x 2 chunks: past even local memory's room, without head groups */
    plan_tuned("lanes=4,cv_min_rows=0,lane_head_groups=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 0);
    p = problem(1, 64, 8, 264, 8192);
    plan_tuned("lanes=4,cv_min_rows=0,lane_head_groups=1,lane_group_rows=8", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.heads_per_group, 4);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.heads_per_group = 8, bad.head_groups = 1);
    p = problem(1, 32, 8, 256, 8192); /* 32 lanes: a warp a row */
    plan_tuned(lanes4, &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    p = problem(1, 128, 8, 128, 8192); /* G = 16: more rows than the registers hold with the query: from local memory */
    plan_tuned("lanes=4,cv_min_rows=0,lane_head_groups=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.lane_q_local, 1);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_plan_refuses(plan, bad.lane_q_local = 0); /* 16 rows with the query in registers: refused */
    plan_tuned("lanes=4,cv_min_rows=0,lane_head_groups=1,lane_group_rows=8", &p, &h100, &plan); /* or 2 groups of 8 */
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(plan.head_groups, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.heads_per_group = 16, bad.head_groups = 1);
    p = problem(1, 96, 8, 128, 8192); /* G = 12, S1 = 2: 24 rows in even groups of 4 heads (8 rows) */
    p.seq_q = 2;
    plan_tuned("lanes=4,cv_min_rows=0,lane_head_groups=1,lane_group_rows=8", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.heads_per_group, 4);
    ck_assert_int_eq(plan.head_groups, 3);
    plan_tuned("lanes=0,cv_min_rows=0,lane_head_groups=1", &p, &h100, &plan); /* no lane shape: heads together */
    ck_assert_int_eq(plan.head_groups, 1);
    p = problem(1, 64, 8, 128, 8192); /* G = 8: one group of 8 rows, or two of 4 under lane_group_rows 4 (the row) */
    plan_tuned("lane_group_rows=8", &p, &h100, &plan);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.heads_per_group, 4);
    ck_assert_int_eq(plan.head_groups, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p = problem(1, 24, 8, 128, 8192); /* G = 3 at 2 rows a group: 2 groups of 2 heads, the last one short */
    plan_tuned("lane_group_rows=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.head_groups * plan.heads_per_group >= 3, 1);
    ck_assert_int_eq(plan.heads_per_group, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p = problem(1, 32, 8, 128, 8192);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.lanes, 2);
    const ifa_device_facts other = {IFA_VENDOR_GENERIC_GPU, 64, 1024, 0, 48 * 1024, 0}; /* an unmeasured GPU */
    ck_assert_int_eq(ifa__plan_make(&p, &other, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.lanes, 0);
    test_tuning_pop();
}
END_TEST

/* The NVIDIA row leaves no plan of a common model shape to the work-group shape (one element per load: 6-17 % of
 * an H200's bandwidth, 3.5x the lane shape's time on an H100): every K/V type (int8 and int4 per channel and per
 * token) at D = 64 to 512, G = 1 to 16, 1 to 16 query tokens (8 and 16 up to D = 256, 4 at 512: speculative
 * decoding's), and DeepSeek's MLA (D = 576, D_v = 512) at G = 16 and 128 with 1 to 5 tokens, take the matrix or the
 * lane shape (Zen 4, 2026-11-29: D = 80/96/112, D = 512, MLA, fp32, int4 and float8 did not, nor 8-16 tokens of
 * most types). */
START_TEST(nvidia_row_every_plan_in_a_gpu_shape) {
    static const ifa_dtype kv[] = {IFA_DTYPE_FLOAT16,  IFA_DTYPE_BFLOAT16,      IFA_DTYPE_FLOAT32,
                                   IFA_DTYPE_INT8,     IFA_DTYPE_INT4,          IFA_DTYPE_FLOAT8_E4M3,
                                   IFA_DTYPE_FLOAT8_E5M2};
    static const int64_t dims[] = {64, 80, 96, 112, 128, 160, 192, 256, 512}, groups[] = {1, 2, 4, 8, 16};
    int checked = 0;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; ++i)
        for (int per_token = 0; per_token <= (kv[i] == IFA_DTYPE_INT8 || kv[i] == IFA_DTYPE_INT4); ++per_token)
            for (size_t j = 0; j < sizeof dims / sizeof dims[0]; ++j)
                for (size_t k = 0; k < sizeof groups / sizeof groups[0]; ++k)
                    for (int64_t sq = 1; sq <= (dims[j] <= 256 ? 16 : 4); sq *= 2) {
                        ifa_problem p = problem(4, 8 * groups[k], 8, dims[j], 4096);
                        p.seq_q = sq, p.kv_dtype = kv[i];
                        if (kv[i] == IFA_DTYPE_INT8 || kv[i] == IFA_DTYPE_INT4)
                            p.antiquant = p.v_antiquant = per_token ? IFA_ANTIQUANT_PER_TOKEN : IFA_ANTIQUANT_PER_CHANNEL;
                        ifa_plan plan;
                        ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
                        ck_assert_msg(plan.mma > 0 || plan.lanes > 0, "kv %d%s D = %lld G = %lld S1 = %lld: the work-group shape",
                                      (int)kv[i], per_token ? " per token" : "", (long long)dims[j], (long long)groups[k],
                                      (long long)sq);
                        ++checked;
                    }
    for (int64_t n = 16; n <= 128; n *= 8)
        for (int64_t sq = 1; sq <= 5; ++sq) {
            ifa_problem p = problem(4, n, 1, 576, 4096);
            p.value_dim = 512, p.seq_q = sq;
            ifa_plan plan;
            ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
            ck_assert_msg(plan.lanes > 0, "MLA G = %lld S1 = %lld: the work-group shape", (long long)n, (long long)sq);
            ++checked;
        }
    ck_assert_int_eq(checked, (7 + 2) * (8 * 5 + 3) * 5 + 2 * 5);
}
END_TEST

/* The lane shape takes 1 key row a step for fp32 K/V where its rows' chunks pass 8 (the query from local memory: 16
 * rows at 2 a step spilled by nv-regs), the row's 2 elsewhere: fp32 at 8 rows, fp16 at 16. */
START_TEST(lane_fp32_step_rows) {
    ifa_problem p = problem(16, 16, 8, 128, 512);
    p.seq_q = 8, p.kv_dtype = IFA_DTYPE_FLOAT32;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq((int64_t)plan.heads_per_group * p.seq_q, 16);
    ck_assert_int_eq(plan.lanes, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.seq_q = 4;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_le((int64_t)plan.heads_per_group * p.seq_q, 8);
    ck_assert_int_eq(plan.lanes, 2);
    p.seq_q = 8, p.kv_dtype = IFA_DTYPE_FLOAT16;
    plan_tuned("mma=0", &p, &h100, &plan);
    ck_assert_int_eq((int64_t)plan.heads_per_group * p.seq_q, 16);
    ck_assert_int_eq(plan.lanes, 2);
}
END_TEST

/* The latent tile (plan mma 7) where the row asks (mma_mla): DeepSeek's MLA (D = 576, D_v = 512, fp16 or bf16, one
 * KV head) in groups of up to 16 rows (G = 128: 8 groups; 2 tokens: 8 heads a group), with RoPE or another 16-bit
 * query type (the query in two parts: more local memory), a key row of 512 with a value of its own; not by default
 * (mma_mla 0 in the NVIDIA row: the lane shape), nor with per-channel scales, per-batch query tokens or
 * global-rowmax splits, nor for D = 128; the plan check refuses it off its rule or beside those. */
/* The local memory of p's latent tile plan on the h100 profile. */
static int64_t plan_local(const ifa_problem *p) {
    ifa_plan plan;
    plan_tuned("mma_mla=1", p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    return plan.local_mem_bytes;
}

START_TEST(mla_tile_rule) {
    ifa_problem p = problem(4, 128, 1, 576, 4096);
    p.value_dim = 512;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_ne(plan.mma, 7);
    ck_assert_int_gt(plan.lanes, 0);
    plan_tuned("mma_mla=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    ck_assert_int_eq(plan.heads_per_group, 16);
    ck_assert_int_eq(plan.head_groups, 8);
    ck_assert_int_eq(plan.lanes, 0);
    ck_assert_int_le(plan.local_mem_bytes, 48 * 1024 - 1024);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.split_kv = IFA_SPLIT_GLOBAL_ROWMAX);
    ck_plan_refuses(plan, bad.lane_q_local = 1);
    ck_plan_refuses(plan, bad.mma = 8);
    /* 2 tokens: 8 heads (16 rows) a group; bf16 paged 16 heads in one group (B = 1: splits) */
    ifa_problem q = p;
    q.seq_q = 2;
    plan_tuned("mma_mla=1", &q, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    ck_assert_int_eq(plan.heads_per_group, 8);
    q = problem(1, 16, 1, 576, 8192);
    q.value_dim = 512, q.q_dtype = q.kv_dtype = IFA_DTYPE_BFLOAT16, q.out_dtype = IFA_DTYPE_BFLOAT16;
    plan_tuned("mma_mla=1", &q, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_assert_int_eq(plan.max_splits, 64); /* the row's mma_mla_split_tokens, 128: 16 splits at split_min_tokens' 512 */
    ck_assert_int_eq(plan.split_tokens, 128);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* a key row of 512 with a value of its own */
    q = problem(4, 32, 2, 512, 4096);
    plan_tuned("mma_mla=1", &q, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    /* RoPE (DeepSeek's 64 rotated columns past 512) and a bf16 query against fp16 K/V: the query in two parts */
    const int64_t one_part = plan_local(&p);
    q = p;
    q.rope = IFA_ROPE_GPTJ, q.rope_dim = 64, q.rope_offset = 512;
    plan_tuned("mma_mla=1", &q, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    ck_assert_int_le(plan.local_mem_bytes, 48 * 1024 - 1024);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    q = p;
    q.q_dtype = IFA_DTYPE_BFLOAT16;
    plan_tuned("mma_mla=1", &q, &h100, &plan);
    ck_assert_int_eq(plan.mma, 7);
    ck_assert_int_eq(plan.local_mem_bytes, one_part); /* 16 rows' room holds the low words too */
    /* one-byte caches: e4m3fn with per-tensor scales, e5m2 without, int8 with per-tensor scales */
    for (int c = 0; c < 3; ++c) {
        q = p;
        q.kv_dtype = c == 0 ? IFA_DTYPE_FLOAT8_E4M3 : c == 1 ? IFA_DTYPE_FLOAT8_E5M2 : IFA_DTYPE_INT8;
        if (c != 1) q.antiquant = q.v_antiquant = IFA_ANTIQUANT_PER_TENSOR;
        plan_tuned("mma_mla=1", &q, &h100, &plan);
        ck_assert_msg(plan.mma == 7, "one-byte case %d: mma %d", c, (int)plan.mma);
        ck_assert_int_le(plan.local_mem_bytes, 48 * 1024 - 1024);
        ck_assert_int_eq(plan.mma_cvt, 0);
        /* the card's e4m3fn conversion where the row asks (mma_f8_cvt; sm_89 on: the h100 profile's 90) */
        plan_tuned("mma_mla=1,mma_f8_cvt=1", &q, &h100, &plan);
        ck_assert_int_eq(plan.mma, 7);
        ck_assert_int_eq(plan.mma_cvt, c == 0);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    }
    /* a device whose work-group has 32 KiB: no room for the tile's 16 rows, so no grouping of 16 (the work-group
     * shape's rows, in the tile where they fit) and a plan within the device's local memory */
    ifa_device_facts small = h100;
    small.local_mem_bytes = 32 * 1024;
    test_tuning_push("mma_mla=1");
    ck_assert_int_eq(ifa__plan_make(&p, &small, &plan), IFA_STATUS_OK);
    test_tuning_pop();
    ck_assert_int_lt(plan.heads_per_group, 16);
    ck_assert_int_le(plan.local_mem_bytes, small.local_mem_bytes);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* what the tile does not take: scales, per-batch query tokens, global rowmax, D = 128 */
    for (int c = 0; c < 4; ++c) {
        q = p;
        const char *extra = "mma_mla=1";
        if (c == 0) q.kv_dtype = IFA_DTYPE_INT8, q.antiquant = q.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL;
        if (c == 1)
            q.seq_q = 2, q.q_lengths = 1, q.lengths_mode = IFA_LENGTHS_PER_BATCH, q.max_length = 4096,
            q.total_length = 4096;
        if (c == 2) extra = "mma_mla=1,split_rowmax=2";
        if (c == 3) q = problem(4, 32, 8, 128, 4096);
        plan_tuned(extra, &q, &h100, &plan);
        ck_assert_msg(plan.mma != 7, "case %d: the latent tile", c);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    }
}
END_TEST

/* The lane shape's transposing butterfly (lane_scores) where the row asks and the step's sums split evenly: query
 * rows and lanes powers of two, rows <= the lanes a key row, at least 2 sums and 2 lanes a key row; on in the
 * NVIDIA row (the H100's measurement, docs/tiling.md) at 2 rows a step; the plan check refuses it off its range,
 * without the lane shape or past its rule. */
START_TEST(lane_scores_rule) {
    test_tuning_push("mma=0"); /* the lane shape where the NVIDIA row takes the matrix shape */
    ifa_problem p = problem(1, 32, 8, 128, 8192);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* the NVIDIA row: 2 rows a step */
    ck_assert_int_eq(plan.lanes, 2);
    ck_assert_int_eq(plan.lane_scores, 1);
    plan_tuned("lane_scores=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.lane_scores, 0);
    plan_tuned("lanes=4,lane_scores=1", &p, &h100, &plan); /* 4 rows x 4 lanes: a sum per lane of 16 */
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.lane_scores, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.lane_scores = 2);
    ck_plan_refuses(plan, bad.lanes = 3); /* 12 sums do not halve down to the lanes */
    ck_plan_refuses(plan, bad.lanes = 0);
    plan_tuned("lanes=3,lane_scores=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 3);
    ck_assert_int_eq(plan.lane_scores, 0);
    plan_tuned("lanes=1,lane_scores=1", &p, &h100, &plan); /* 4 sums over 16 lanes: each held by 4 lanes */
    ck_assert_int_eq(plan.lane_scores, 1);
    p = problem(1, 24, 8, 128, 8192); /* G = 3 */
    plan_tuned("lanes=4,lane_scores=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.lane_scores, 0);
    p = problem(1, 8, 8, 128, 8192); /* MHA at 1 row a step: a single sum */
    plan_tuned("lanes=1,lane_scores=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 1);
    ck_assert_int_eq(plan.lane_scores, 0);
    p = problem(3, 3, 3, 8, 363); /* D = 8: one lane a key row, nothing to exchange (its share and rescale would
                                   * overflow the lane's floats of the exchange: ifa-soak seed 4748) */
    plan_tuned("lanes=4,lane_scores=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.lane_scores, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.lane_scores = 1);
    test_tuning_pop();
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* the NVIDIA row's own plan */
    ck_assert_int_eq(plan.lane_scores, 0);
    test_tuning_push("mma=0");
    p = problem(1, 64, 8, 32, 8192); /* G = 8 at D = 32: more rows than the 4 lanes */
    plan_tuned("lanes=4,lane_scores=1,lane_group_rows=8", &p, &h100, &plan);
    ck_assert_int_eq(plan.lanes, 4);
    ck_assert_int_eq(plan.lane_scores, 0);
    p = problem(1, 32, 8, 32, 8192); /* G = 4 at D = 32: 4 sums per lane */
    plan_tuned("lanes=4,lane_scores=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.lane_scores, 1);
    test_tuning_pop();
}
END_TEST

/* A grid of no more work-groups than compute units takes the row's small_grid_work_group_size in the lane shape
 * (256 in the NVIDIA row: B = 1 8192 on an H100, docs/performance.md), other grids and rows keep theirs. */
START_TEST(small_grid_rule) {
    test_tuning_push("mma=0"); /* the lane shape where the NVIDIA row takes the matrix shape */
    ifa_problem p = problem(1, 32, 8, 128, 8192); /* 8 blocks x 16 splits = 128 <= 132 units */
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.work_group_size, 256);
    ck_assert_int_eq(plan.lanes, 2);
    ck_assert_int_le(plan.num_work_groups, h100.compute_units);
    ck_assert_int_eq(plan.local_mem_bytes, ifa__all_vector_local_bytes(4, 1, 128, 128, plan.chunk_rows) +
                                               ifa__lanes_local_bytes(4, 128, 256, 2, 1));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("small_grid_work_group_size=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.work_group_size, 128);
    p = problem(1, 32, 8, 128, 32768); /* 512 work-groups: more than the units */
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.work_group_size, 128);
    p = problem(1, 32, 8, 128, 8192);
    plan_tuned("lanes=0", &p, &h100, &plan); /* the lane shape only */
    ck_assert_int_eq(plan.work_group_size, 128);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK); /* the CPU row: off */
    ck_assert_int_eq(plan.work_group_size, 1);
    test_tuning_pop();
}
END_TEST

/* split_fill takes floor(slots / blocks) splits where that is 2 or more: no partial last wave (on in the NVIDIA
 * row since the H100's tune of 2026-11-26). */
/* The last split of a block combines it (fused_combine) where the row says so and the plan allows it: equal
 * splits with partial rowmax, no cascade, no per-batch query tokens, the all-vector template; a counter per
 * (batch, block). The plan check refuses any other combination. */
/* p's plan on the h100 profile: equal splits with partial rowmax whose last split would read values partial values
 * (splits x rows x D), fused or not as the NVIDIA row's cap says. */
static void h100_fused_plan(const ifa_problem *p, int64_t values, int fused, ifa_plan *plan) {
    ck_assert_int_eq(ifa__plan_make(p, &h100, plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan->split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq((int64_t)plan->max_splits * plan->heads_per_group * p->head_dim, values);
    ck_assert_int_eq(plan->fused_combine, fused);
}

START_TEST(fused_combine_rule) {
    ifa_plan plan, bad;
    /* B = 1, one KV head on 2 CPU cores: 2 splits, the CPU row fuses */
    ifa_problem p = problem(1, 16, 1, 128, 4096);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.fused_combine, 1);
    ck_assert_int_eq(plan.combine_counters, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.fused_combine, 1);
    plan_tuned("fused_combine=0", &p, &pocl, &plan);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_assert_int_eq(plan.combine_counters, 0);
    /* the NVIDIA row fuses everywhere (1, since 2026-11-27 (H100)); a cap above 1 on the partial values the
     * last split reads (splits x rows x D_v): B = 1, 32K takes 32 splits of 4 rows (16384), so the combine kernel
     * under 8192 */
    p = problem(1, 32, 8, 128, 32768);
    h100_fused_plan(&p, 16384, 1, &plan);
    plan_tuned("fused_combine=8192", &p, &h100, &plan);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_assert_int_eq(plan.combine_counters, 0);
    plan_tuned("fused_combine=16384", &p, &h100, &plan);
    ck_assert_int_eq(plan.fused_combine, 1);
    plan_tuned("fused_combine=16383", &p, &h100, &plan);
    ck_assert_int_eq(plan.fused_combine, 0);
    /* B = 2: 16 splits (8192 values), fused under the cap; a counter per (batch, block) */
    p = problem(2, 32, 8, 128, 32768);
    h100_fused_plan(&p, 8192, 1, &plan);
    plan_tuned("fused_combine=8192", &p, &h100, &plan);
    ck_assert_int_eq(plan.fused_combine, 1);
    ck_assert_int_eq(plan.combine_counters, plan.num_work_groups / plan.max_splits);
    ck_assert_int_eq(plan.combine_counters, 2 * ifa__plan_blocks(&plan));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.fused_combine = 2);
    ck_plan_refuses(plan, bad.combine_counters += 1);
    bad = plan, bad.fused_combine = 0;
    ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_INVALID_PLAN); /* counters without the fused combine */
    bad.combine_counters = 0;
    ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_OK);
    /* global rowmax: the combine only sums against the max pass's maxima, in the kernel */
    plan_tuned("fused_combine=1,split_rowmax=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_GLOBAL_ROWMAX);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_plan_refuses(plan, bad.fused_combine = 1, bad.combine_counters = 2 * ifa__plan_blocks(&plan));
    /* no split: nothing to combine */
    p = problem(128, 32, 8, 128, 4096);
    plan_tuned("fused_combine=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_NONE);
    ck_assert_int_eq(plan.fused_combine, 0);
    /* balanced units (skewed per-batch lengths on the CPU) follow fused_balanced, not this value
     * (fused_balanced_rule) */
    p = problem(4, 8, 1, 64, 10000);
    p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 10000, p.total_length = 10003;
    plan_tuned("fused_combine=1,fused_balanced=0", &p, &pocl, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_BALANCED);
    ck_assert_int_eq(plan.fused_combine, 0);
    plan_tuned("fused_combine=0,fused_balanced=1", &p, &pocl, &plan);
    ck_assert_int_eq(plan.fused_combine, 1);
    /* a shared prefix: its slot and pass go through the combine kernel */
    p = problem(1, 16, 1, 128, 4096);
    p.has_prefix = 1, p.prefix_seq = p.prefix_len = 1024;
    plan_tuned("fused_combine=1", &p, &pocl, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_plan_refuses(plan, bad.fused_combine = 1, bad.combine_counters = 1);
    /* per-batch query tokens: their padding rows are the combine kernel's to write */
    p = problem(1, 16, 1, 128, 4096);
    p.seq_q = 2, p.q_lengths = 1, p.lengths_mode = IFA_LENGTHS_PER_BATCH, p.max_length = 4096, p.total_length = 4096;
    plan_tuned("fused_combine=1,balance_milli=1000000", &p, &pocl, &plan);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.fused_combine, 0);
    /* the cv template's partials */
    p = problem(1, 32, 8, 128, 32768);
    p.template_request = IFA_TEMPLATE_CV;
    plan_tuned("fused_combine=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.template_id, IFA_TEMPLATE_CV);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_eq(plan.fused_combine, 0);
    ck_plan_refuses(plan, bad.fused_combine = 1, bad.combine_counters = 8);
}
END_TEST

START_TEST(split_fill_rule) {
    ifa_problem p = problem(16, 32, 8, 128, 8192); /* 128 blocks, 4 waves' 528 slots: 5 splits (640), or 4 (512) */
    ifa_plan plan;
    plan_tuned("split_fill=0,split_waves=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.max_splits, 5);
    plan_tuned("split_waves=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.max_splits, 4);
    ck_assert_int_le(plan.num_work_groups, 528);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* the row's 2 waves, 264 slots: 2 */
    ck_assert_int_eq(plan.max_splits, 2);
    p = problem(64, 32, 8, 128, 4096); /* 512 blocks against 528 slots: floor 1, so the ceiling's 2 */
    plan_tuned("split_fill=1,split_waves=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.max_splits, 2);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* more blocks than the row's 264: none */
    ck_assert_int_eq(plan.max_splits, 1);
    p = problem(1, 32, 8, 128, 32768); /* 8 blocks: 66 either way, then split_min_tokens: 64 */
    plan_tuned("split_fill=1,split_waves=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.max_splits, 64);
}
END_TEST

/* The matrix shape (mma, on in the NVIDIA row since 2026-11-26, H100) where it fits: fp16 query and K/V without RoPE or antiquant, D a
 * multiple of 32 up to 128, D_v = D, up to 16 query rows (head groups of 16), whole warps; before the lane shape.
 * The plan check refuses it elsewhere. */
START_TEST(mma_rule) {
    ifa_problem p = problem(1, 32, 8, 128, 8192);
    ifa_plan plan;
    plan_tuned("mma=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    ck_assert_int_eq(plan.lanes, 2);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* on in the NVIDIA row: 5 at G <= 8 */
    ck_assert_int_eq(plan.mma, 5);
    ck_assert_int_eq(plan.lanes, 0);
    ck_assert_int_eq(plan.vector_loads, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.mma = 6);
    plan_tuned("mma=2", &p, &h100, &plan); /* the lean variant */
    ck_assert_int_eq(plan.mma, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.lanes = 2);
    p = problem(32, 128, 8, 64, 2048); /* G = 16: one group of 16 rows (the lane shape: 4 groups of 4) */
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(plan.heads_per_group, 16);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p = problem(1, 256, 8, 128, 4096); /* G = 32: two groups of 16 */
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(plan.heads_per_group, 16);
    ck_assert_int_eq(plan.head_groups, 2);
    p = problem(1, 32, 8, 128, 8192);
    p.seq_q = 4; /* G = 4 x 4 tokens: 16 rows */
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(plan.heads_per_group, 4);
    p = problem(1, 32, 8, 256, 8192); /* D = 256: the accumulators would take 128 registers */
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    ck_plan_refuses(plan, bad.mma = 1, bad.lanes = 0);
    p = problem(1, 32, 8, 80, 8192); /* D = 80: not whole 16-byte quarters */
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p = problem(1, 32, 8, 128, 8192); /* int8 K/V with per-channel scales: where the row asks (mma_int8) */
    p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL;
    plan_tuned("mma=1,mma_int8=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    plan_tuned("mma=1,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_TOKEN; /* per-token scales: not in the matrix shape */
    plan_tuned("mma=1,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p = problem(1, 32, 8, 96, 8192); /* int8 at D = 96: a quarter row of 24 bytes is not whole 16-byte loads */
    p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_TENSOR;
    plan_tuned("mma=1,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p = problem(1, 32, 8, 128, 8192); /* RoPE: the rotated query enters as two fp16 parts */
    p.rope = IFA_ROPE_NEOX, p.rope_dim = 128;
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    p = problem(1, 32, 8, 128, 8192);
    p.q_dtype = IFA_DTYPE_BFLOAT16, p.kv_dtype = IFA_DTYPE_BFLOAT16; /* bf16: where the row asks (mma_bf16) */
    plan_tuned("mma=1,mma_bf16=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK); /* the NVIDIA row asks */
    ck_assert_int_eq(plan.mma, 5);
    plan_tuned("mma=1,mma_bf16=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    p.kv_dtype = IFA_DTYPE_FLOAT32; /* fp32 K/V: never */
    plan_tuned("mma=1,mma_bf16=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p = problem(1, 32, 8, 128, 8192);
    p.value_dim = 64;
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    /* elsewhere than NVIDIA the products go through local memory: the same plan, more local memory */
    p = problem(1, 32, 8, 128, 8192);
    plan_tuned("mma=1,vector_width=1,work_group_size=64", &p, &pocl, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_ge(plan.local_mem_bytes, ifa__mma_local_bytes(4, 64, 0));
    ck_assert_int_gt(ifa__mma_local_bytes(4, 64, 0), ifa__mma_local_bytes(4, 64, 1));
}
END_TEST

/* The transposed matrix shape (mma 3, its lean variant 4): up to 8 query rows, D a multiple of 64 up to 256, the
 * same inputs as the other and int8 with token scales; where it does not fit, mma 3 falls back to 1 and 4 to 2. Over 8 rows at D above 128
 * the heads go in groups of 8; the plan check refuses it past its rule. */
START_TEST(mma_transposed_rule) {
    ifa_problem p = problem(1, 32, 8, 128, 8192);
    ifa_plan plan;
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(plan.lanes, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("mma=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 4);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("mma=5", &p, &h100, &plan); /* the next step's rows during each step */
    ck_assert_int_eq(plan.mma, 5);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("mma=7", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    p.seq_q = 2; /* G = 4 x 2 tokens: 8 rows */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    p.seq_q = 4; /* 16 rows: the other matrix shape */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(plan.heads_per_group, 4);
    p = problem(32, 128, 8, 64, 2048); /* G = 16: one group of 16 rows in the other shape, not two of 8 */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(plan.heads_per_group, 16);
    plan_tuned("mma=4", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 2);
    plan_tuned("mma=5", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    ck_plan_refuses(plan, bad.mma = 3); /* 16 rows */
    plan_tuned("mma=5,mma_group_rows=8", &p, &h100, &plan); /* two groups of 8 in the transposed shape */
    ck_assert_int_eq(plan.mma, 5);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(plan.head_groups, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("mma=1,mma_group_rows=8", &p, &h100, &plan); /* the cap holds in the other shape too */
    ck_assert_int_eq(plan.mma, 1);
    ck_assert_int_eq(plan.heads_per_group, 8);
    plan_tuned("mma=3,mma_group_rows=6", &p, &h100, &plan); /* 16 rows in even groups: 3 of up to 6 */
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(plan.heads_per_group, 6);
    ck_assert_int_eq(plan.head_groups, 3);
    p = problem(4, 32, 4, 256, 8192); /* D = 256, G = 8 */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.mma = 1); /* D above 128 */
    plan_tuned("mma=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p = problem(1, 32, 2, 256, 8192); /* D = 256, G = 16: two groups of 8 */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(plan.head_groups, 2);
    plan_tuned("mma=3,mma_group_rows=16", &p, &h100, &plan); /* a cap above the shape's 8 rows changes nothing */
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(plan.heads_per_group, 8);
    p = problem(1, 32, 8, 192, 8192); /* D = 192 */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    p = problem(1, 32, 8, 96, 8192); /* D = 96: not whole 16-byte eighths; the other shape takes it */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    p = problem(1, 32, 8, 320, 8192); /* D = 320: neither */
    plan_tuned("mma=3", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p = problem(4, 32, 4, 256, 8192); /* int8 with per-channel scales where the row asks (the NVIDIA row does) */
    p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL;
    plan_tuned("mma=3,mma_int8=0", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    plan_tuned("mma=3,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.mma, 5);
    p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_TOKEN; /* token scales too (the other shape: not) */
    plan_tuned("mma=3,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.antiquant = IFA_ANTIQUANT_PER_CHANNEL, p.v_antiquant = IFA_ANTIQUANT_PER_HEAD_PER_TOKEN; /* KIVI's */
    plan_tuned("mma=3,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    p.head_dim = 128, p.value_dim = 0, p.num_kv_heads = 2; /* G = 16: the other shape refuses token scales, so */
    plan_tuned("mma=3,mma_int8=1", &p, &h100, &plan);      /* two groups of 8 in this one */
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(plan.heads_per_group, 8);
    ck_assert_int_eq(plan.head_groups, 2);
    /* mma_int8 2: int8 rows loaded two steps ahead (plan mma 6) where mma 5 loads them a step ahead: int8 up to
     * D = 128; fp16 K/V, D = 256 and mma 3 keep their shape, and the plan check refuses 6 there */
    p = problem(16, 32, 8, 128, 8192);
    p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL;
    plan_tuned("mma=5,mma_int8=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 6);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("mma=5,mma_int8=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    plan_tuned("mma=3,mma_int8=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 3);
    p.head_dim = 256, p.value_dim = 0;
    plan_tuned("mma=5,mma_int8=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    ck_plan_refuses(plan, bad.mma = 6);
    p = problem(16, 32, 8, 128, 8192);
    plan_tuned("mma=5,mma_int8=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    /* float8 K/V where the row asks (mma_float8; the NVIDIA row since 2026-11-27 (H100)): no scales or any
     * form in the transposed shape, per channel in the other; int8's D rule (a multiple of 64); mma 6 at 2 */
    for (int f = 0; f < 2; ++f) {
        p = problem(16, 32, 8, 128, 8192);
        p.kv_dtype = f ? IFA_DTYPE_FLOAT8_E5M2 : IFA_DTYPE_FLOAT8_E4M3;
        ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
        ck_assert_int_eq(plan.mma, 5);
        plan_tuned("mma_float8=0", &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, 0);
        plan_tuned("mma=5,mma_float8=1,mma_int8=2", &p, &h100, &plan); /* int8's depth is int8's */
        ck_assert_int_eq(plan.mma, 5);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
        plan_tuned("mma=5,mma_float8=2", &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, 6);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
        p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_TOKEN;
        plan_tuned("mma=3,mma_float8=1", &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, 3);
        p.num_heads = 256; /* G = 32: neither shape; G = 16 takes the other with per-channel scales only */
        plan_tuned("mma=1,mma_float8=1", &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, 0);
        p.num_heads = 128, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL;
        plan_tuned("mma=1,mma_float8=1", &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, 1);
        p.head_dim = 96; /* a quarter row of 24 bytes */
        plan_tuned("mma=1,mma_float8=1", &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, 0);
    }
    /* int4 K/V where the row asks (mma_int4; not the NVIDIA row until the card has checked it): D a multiple of
     * 128 in both shapes */
    p = problem(16, 32, 8, 128, 8192);
    p.kv_dtype = IFA_DTYPE_INT4, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.mma, 0);
    plan_tuned("mma=5,mma_int4=1,mma_int8=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("mma=1,mma_int4=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 1);
    p.head_dim = 256, p.value_dim = 0;
    plan_tuned("mma=5,mma_int4=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    plan_tuned("mma=5,mma_int4=2", &p, &h100, &plan); /* two steps ahead only up to D = 128 */
    ck_assert_int_eq(plan.mma, 5);
    p.head_dim = 128;
    plan_tuned("mma=5,mma_int4=2", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 6);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.head_dim = 192; /* a quarter row of 48 nibbles: not whole 16-byte loads */
    plan_tuned("mma=5,mma_int4=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    p.head_dim = 64;
    plan_tuned("mma=1,mma_int4=1", &p, &h100, &plan);
    ck_assert_int_eq(plan.mma, 0);
    ck_plan_refuses(plan, bad.mma = 1, bad.lanes = 0);
    /* the query's operand words in local memory (mma_q_local, the plan's lane_q_local) where they are two parts
     * held in registers (int8 with per-channel scales under mma 5 up to D = 128; not fp16 there: one part) and where
     * the plan reads and converts the query at each step (mma 4, D = 256: any query); e4m3fn by the card's conversion instruction (mma_f8_cvt, the plan's mma_cvt) with the matrix
     * shapes and e4m3fn only. The plan check refuses either flag where the plan could not take it (q_ok, cvt_ok:
     * where it could, the row decides). */
    static const struct {
        const char *tuning;
        int32_t kv, antiquant, d, mma, q_local, cvt, q_ok, cvt_ok;
    } flags[] = {
        {"", IFA_DTYPE_INT8, IFA_ANTIQUANT_PER_CHANNEL, 128, 5, 0, 0, 1, 0},
        {"mma_q_local=1", IFA_DTYPE_INT8, IFA_ANTIQUANT_PER_CHANNEL, 128, 5, 1, 0, 1, 0},
        {"mma=4,mma_q_local=1", IFA_DTYPE_INT8, IFA_ANTIQUANT_PER_CHANNEL, 128, 4, 1, 0, 1, 0},
        {"mma_q_local=1", IFA_DTYPE_INT8, IFA_ANTIQUANT_PER_CHANNEL, 256, 5, 1, 0, 1, 0},
        {"mma_q_local=1", IFA_DTYPE_FLOAT16, IFA_ANTIQUANT_NONE, 256, 5, 1, 0, 1, 0},
        {"", IFA_DTYPE_FLOAT16, IFA_ANTIQUANT_NONE, 256, 5, 0, 0, 1, 0},
        {"mma_q_local=1", IFA_DTYPE_INT8, IFA_ANTIQUANT_PER_TENSOR, 128, 5, 0, 0, 0, 0}, /* scales the scores */
        {"mma_q_local=1", IFA_DTYPE_FLOAT16, IFA_ANTIQUANT_NONE, 128, 5, 0, 0, 0, 0},
        {"", IFA_DTYPE_FLOAT8_E4M3, IFA_ANTIQUANT_NONE, 128, 5, 0, 0, 0, 1},
        {"mma_f8_cvt=1", IFA_DTYPE_FLOAT8_E4M3, IFA_ANTIQUANT_NONE, 128, 5, 0, 1, 0, 1},
        /* the lane shape instead, where the query's columns from local memory are legal (lane_q_local) */
        {"mma_f8_cvt=1,mma_float8=0", IFA_DTYPE_FLOAT8_E4M3, IFA_ANTIQUANT_NONE, 128, 0, 0, 0, 1, 0},
        {"mma_f8_cvt=1", IFA_DTYPE_FLOAT8_E5M2, IFA_ANTIQUANT_NONE, 128, 5, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i) {
        p = problem(16, 32, 8, flags[i].d, 8192);
        p.kv_dtype = flags[i].kv, p.antiquant = p.v_antiquant = flags[i].antiquant;
        plan_tuned(flags[i].tuning, &p, &h100, &plan);
        ck_assert_int_eq(plan.mma, flags[i].mma);
        ck_assert_int_eq(plan.lane_q_local, flags[i].q_local);
        ck_assert_int_eq(plan.mma_cvt, flags[i].cvt);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
        if (flags[i].q_local) { /* the words' room on top of the same plan's without them */
            char without[64];
            snprintf(without, sizeof without, "%s,mma_q_local=0", flags[i].tuning);
            ifa_plan base;
            plan_tuned(without, &p, &h100, &base);
            ck_assert_int_eq(base.lane_q_local, 0);
            ck_assert_int_eq(plan.local_mem_bytes, base.local_mem_bytes + ifa__mma_q_local_bytes(flags[i].d));
        }
        ifa_plan bad = plan;
        bad.lane_q_local = 1;
        ck_assert_int_eq(ifa__plan_check(&bad), flags[i].q_ok ? IFA_STATUS_OK : IFA_STATUS_INVALID_PLAN);
        bad = plan, bad.mma_cvt = 1;
        ck_assert_int_eq(ifa__plan_check(&bad), flags[i].cvt_ok ? IFA_STATUS_OK : IFA_STATUS_INVALID_PLAN);
        ck_plan_refuses(plan, bad.shape = IFA_SHAPE_WORK_GROUP);
        ck_plan_refuses(plan, bad.problem.reserved1 = 1);
    }
    /* not before sm_89 (an A100: 80) */
    p.kv_dtype = IFA_DTYPE_FLOAT8_E4M3;
    ifa_device_facts a100 = h100;
    a100.compute_capability = 80;
    plan_tuned("mma_f8_cvt=1", &p, &a100, &plan);
    ck_assert_int_eq(plan.mma, 5);
    ck_assert_int_eq(plan.mma_cvt, 0);
    /* elsewhere than NVIDIA: the same plan, the products through local memory */
    p = problem(1, 32, 8, 256, 8192);
    plan_tuned("mma=3,vector_width=1,work_group_size=64", &p, &pocl, &plan);
    ck_assert_int_eq(plan.mma, 3);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_ge(plan.local_mem_bytes, ifa__mma_local_bytes(4, 64, 0));
}
END_TEST

/* Software prefetch belongs to the vector shape: the CPU row asks for it, the GPU rows and the scalar shape
 * never, and the plan check refuses a scalar-shape plan that carries it. */
START_TEST(prefetch_rows_rule) {
    ifa_problem p = problem(2, 32, 8, 128, 4096);
    p.layout = IFA_LAYOUT_BNSD; /* the row's distance as it is (multi_head_prefetch_distance has BSND's) */
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_gt(plan.vector_width, 1);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_width, 1);
    ck_assert_int_eq(plan.prefetch_rows, 0);
    ck_plan_refuses(plan, bad.prefetch_rows = 16);
    ck_plan_refuses(plan, bad.prefetch_rows = -1);
    p.template_request = IFA_TEMPLATE_CV;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 0);
}
END_TEST

/* The BSND plan of (b, n, nkv, d, s) on dev, which must plan. */
static ifa_plan bsnd_plan(int64_t b, int64_t n, int64_t nkv, int64_t d, int64_t s, const ifa_device_facts *dev) {
    const ifa_problem p = bsnd_problem(b, n, nkv, d, s);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, dev, &plan), IFA_STATUS_OK);
    return plan;
}

/* The KV heads per work-group of the BSND plan of (b, n, nkv, d, s) on dev. */
static int32_t bsnd_kv_heads(int64_t b, int64_t n, int64_t nkv, int64_t d, int64_t s, const ifa_device_facts *dev) {
    return bsnd_plan(b, n, nkv, d, s, dev).kv_heads_per_group;
}

/* Intel's CPU row takes all KV heads per BSH/BSND work-group at every slice size (the AMD row needs
 * 256-byte slices on AVX-512), and no row takes all heads where the blocks they make cannot give every
 * compute unit work (a sequence too short to split). */
START_TEST(multi_heads_intel_row_and_fill) {
    ifa_device_facts xeon = intel; /* as the Intel VM reports itself: 16 float lanes */
    xeon.native_float_width = 16;
    ck_assert(ifa__vendor_is_cpu(IFA_VENDOR_CPU_INTEL) && ifa__vendor_is_cpu(IFA_VENDOR_CPU));
    ck_assert(!ifa__vendor_is_cpu(IFA_VENDOR_NVIDIA) && !ifa__vendor_is_cpu(IFA_VENDOR_GENERIC_GPU));
    const ifa_tuning ti = ifa__tuning_for(IFA_VENDOR_CPU_INTEL), ta = ifa__tuning_for(IFA_VENDOR_CPU);
    ck_assert_int_eq(ti.vendor, IFA_VENDOR_CPU_INTEL);
    ck_assert_int_eq(ti.multi_head_min_slice_bytes, 0);
    ck_assert_int_eq(ti.multi_head_min_row_bytes, 0);
    ck_assert_int_eq(ti.pv_prefetch_paged, 0);
    ck_assert_int_eq(ti.buffer_offset, 640);
    ck_assert_int_eq(ti.spread_prefetch, 1);
    ck_assert_int_eq(ti.multi_head_prefetch_bytes, 0);
    ck_assert_int_eq(ti.multi_head_chunk_bytes_g1, 0);
    ck_assert_int_eq(ti.multi_head_chunk_bytes_16, 0);
    ck_assert_int_eq(ti.pv_prefetch_rows_16, 2);
    ck_assert_int_eq(ta.pv_prefetch_rows_16, 4);
    ck_assert_int_eq(ti.pv_prefetch_rows, 64); /* the CPU row's since 2026-11-30 (Emerald Rapids) */
    ck_assert_int_eq(ta.pv_prefetch_rows, 64);
    ck_assert_int_eq(ta.pv_prefetch_paged, 2);
    ck_assert_int_eq(ta.multi_head_min_slice_bytes, 256);
    ck_assert_int_eq(ti.pv_block_8rows, 0); /* measured on Zen 4 only */
    ck_assert_int_eq(ta.pv_block_8rows, 1);
    /* the rest is the CPU row's */
    ifa_tuning same = ti;
    same.vendor = ta.vendor, same.multi_head_min_slice_bytes = ta.multi_head_min_slice_bytes;
    same.pv_prefetch_paged = ta.pv_prefetch_paged, same.buffer_offset = ta.buffer_offset;
    same.multi_head_prefetch_bytes = ta.multi_head_prefetch_bytes;
    same.multi_head_chunk_bytes_g1 = ta.multi_head_chunk_bytes_g1;
    same.multi_head_chunk_bytes_16 = ta.multi_head_chunk_bytes_16;
    same.pv_prefetch_rows_16 = ta.pv_prefetch_rows_16;
    same.pv_block_8rows = ta.pv_block_8rows;
    ck_assert_mem_eq(&same, &ta, sizeof same);
    ifa_problem p = problem(1, 16, 16, 64, 8192); /* 128-byte slices: the AMD row's one-head case */
    p.layout = IFA_LAYOUT_BSND;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.prefetch_rows, 32); /* 4 KiB of a strided head's slices ahead */
    ck_assert_int_eq(ifa__plan_make(&p, &xeon, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 16);
    ck_assert_int_eq(plan.prefetch_rows, 16); /* whole rows: no strided distance */
    p = problem(1, 8, 8, 128, 8192); /* 256-byte slices, 2 KiB rows, G = 1: all heads on both rows */
    p.layout = IFA_LAYOUT_BSND;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(ifa__plan_make(&p, &xeon, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.max_splits, 2); /* B = 1: two splits fill the two cores */
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* the fill rule: B x (the most splits of split_min_tokens rows) blocks against the compute units */
    ck_assert_int_eq(bsnd_kv_heads(1, 8, 8, 128, 2047, &xeon), 1); /* one split at most: one block, two cores */
    ck_assert_int_eq(bsnd_kv_heads(1, 8, 8, 128, 2047, &avx2), 1);
    ck_assert_int_eq(bsnd_kv_heads(1, 8, 8, 128, 2048, &xeon), 8); /* two splits */
    ck_assert_int_eq(bsnd_kv_heads(2, 8, 8, 128, 1024, &avx2), 8);  /* two batches fill two cores unsplit */
    test_tuning_push("split_min_tokens=4096,split_min_work=0"); /* the rule follows the row's split length */
    ck_assert_int_eq(bsnd_kv_heads(2, 8, 8, 128, 1024, &avx2), 8);
    ck_assert_int_eq(bsnd_kv_heads(1, 8, 8, 128, 4096, &xeon), 1);
    test_tuning_pop();
    /* and its split floor by work (split_min_work): all 8 heads' rows at G = 1 take 8 x 256 multiply-adds a key
     * row, 2048 rows a split, so 4096 rows split in two there; at G = 4 (32 rows) 512 rows a split, so B = 1 at
     * 1024 rows takes all heads in two splits (AMD Zen 4, cold: 0.77x of one head's 8 work-groups' time) */
    test_tuning_push("split_min_tokens=4096");
    ck_assert_int_eq(bsnd_kv_heads(1, 8, 8, 128, 4096, &xeon), 8);
    test_tuning_pop();
    ck_assert_int_eq(bsnd_kv_heads(1, 32, 8, 128, 1024, &pocl), 8);
    ck_assert_int_eq(bsnd_kv_heads(1, 32, 8, 128, 1023, &pocl), 1);
    test_tuning_push("split_min_work=0");
    ck_assert_int_eq(bsnd_kv_heads(1, 32, 8, 128, 1024, &pocl), 1);
    test_tuning_pop();
    p = problem(1, 8, 8, 128, 1024); /* per-batch lengths: balanced units cut the one block for both cores */
    p.layout = IFA_LAYOUT_BSND, p.lengths_mode = IFA_LENGTHS_PER_BATCH;
    ck_assert_int_eq(ifa__plan_make(&p, &xeon, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_BALANCED);
    ck_assert_int_eq(plan.units, 2);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
}
END_TEST

/* All KV heads per work-group with P.V's next-chunk prefetch: the keys multi_head_prefetch_bytes ahead in whole
 * rows (the CPU row: 8 KiB, 4 rows of N_kv = 8, D = 128 fp16, with 32 or 16 vector registers); the full
 * prefetch_rows without that P.V prefetch (G = 8), with one head and in the Intel row (unmeasured there). With
 * one query row per KV head the chunk holds multi_head_chunk_bytes_g1 of each tensor (the CPU row: 32 KiB), where
 * the others hold multi_head_chunk_bytes (128 KiB); with 16 vector registers multi_head_chunk_bytes_16 at any G
 * (32 KiB). */
START_TEST(multi_head_prefetch_distance) {
    ifa_problem p = bsnd_problem(8, 32, 8, 128, 4096);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(plan.prefetch_rows, 4);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("multi_head_prefetch_bytes=0", &p, &pocl, &plan);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    plan_tuned("multi_head_prefetch_bytes=100000", &p, &pocl, &plan);
    ck_assert_int_eq(plan.prefetch_rows, 16); /* never beyond prefetch_rows */
    plan_tuned("multi_head_prefetch_bytes=1", &p, &pocl, &plan);
    ck_assert_int_eq(plan.prefetch_rows, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    /* MHA, 4 KiB rows: 2 */
    plan = bsnd_plan(8, 16, 16, 128, 2048, &pocl);
    ck_assert_int_eq(plan.kv_heads_per_group, 16);
    ck_assert_int_eq(plan.prefetch_rows, 2);
    /* G = 8: the next-chunk prefetch too on AVX-512 (up to 64 rows), so 8 KiB; Intel's row prefetches the next
     * chunk too (the CPU row's 64 rows since 2026-11-30 (Emerald Rapids)) but keeps the full distance (its
     * multi_head_prefetch_bytes 0: BSND level either way on Emerald Rapids, 2026-11-30) */
    plan = bsnd_plan(8, 64, 8, 128, 4096, &pocl);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(plan.prefetch_rows, 4);
    plan = bsnd_plan(8, 64, 8, 128, 4096, &intel);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    /* one KV head per work-group (BNSD) keeps the rows; AVX2 at G = 1 (its P.V prefetch on) takes the bytes */
    p.layout = IFA_LAYOUT_BNSD;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    ifa_problem g1 = problem(8, 8, 8, 128, 4096);
    g1.layout = IFA_LAYOUT_BSND;
    ck_assert_int_eq(ifa__plan_make(&g1, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(plan.prefetch_rows, 4); /* AVX2 too (Zen 3, 2026-11-28) */
    plan_tuned("multi_head_prefetch_bytes=0", &g1, &avx2, &plan);
    ck_assert_int_eq(plan.prefetch_rows, 16);
    ck_assert_int_eq(ifa__plan_make(&g1, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.chunk_rows, 16); /* AVX2: 32 KiB of 2 KiB rows at any G (multi_head_chunk_bytes_16) */
    plan_tuned("multi_head_chunk_bytes_16=0", &g1, &avx2, &plan);
    ck_assert_int_eq(plan.chunk_rows, 64); /* else 128 KiB: AVX2 has no G = 1 rule of its own */
    ifa_problem g4 = bsnd_problem(8, 32, 8, 128, 4096), mha = bsnd_problem(2, 32, 32, 128, 4096);
    ck_assert_int_eq(ifa__plan_make(&g4, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.chunk_rows, 16);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("multi_head_chunk_bytes_16=65536", &g4, &avx2, &plan);
    ck_assert_int_eq(plan.chunk_rows, 32);
    ck_assert_int_eq(ifa__plan_make(&mha, &avx2, &plan), IFA_STATUS_OK); /* 8 KiB rows: the smallest chunk, 8 */
    ck_assert_int_eq(plan.kv_heads_per_group, 32);
    ck_assert_int_eq(plan.chunk_rows, 8);
    ck_assert_int_eq(ifa__plan_make(&g4, &pocl, &plan), IFA_STATUS_OK); /* 32 registers: 128 KiB at G = 4 */
    ck_assert_int_eq(plan.chunk_rows, 64);
    /* the chunk: 32 KiB of 2 KiB rows at G = 1, 128 KiB at G = 4, S1 = 2 or in the Intel row */
    ck_assert_int_eq(ifa__plan_make(&g1, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.chunk_rows, 16);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("multi_head_chunk_bytes_g1=65536", &g1, &pocl, &plan);
    ck_assert_int_eq(plan.chunk_rows, 32);
    plan_tuned("multi_head_chunk_bytes_g1=0", &g1, &pocl, &plan);
    ck_assert_int_eq(plan.chunk_rows, 64);
    ck_assert_int_eq(ifa__plan_make(&g1, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.chunk_rows, 64);
    g1.seq_q = 2;
    ck_assert_int_eq(ifa__plan_make(&g1, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.chunk_rows, 64);
    p.layout = IFA_LAYOUT_BSND; /* G = 4 */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.chunk_rows, 64);
}
END_TEST

/* The spread prefetch: all KV heads per work-group with the prefetch and 32 vector registers, on rows that
 * ask for it (both CPU rows; the GPU rows' prefetch-free kernels keep the row-by-row form, and so does AVX2,
 * unmeasured); IFA_TUNING sets it either way; the plan check refuses it outside 0/1, without the prefetch,
 * with one KV head per work-group or with 16 registers. */
START_TEST(spread_prefetch_rule) {
    ifa_problem p = bsnd_problem(8, 32, 8, 128, 4096);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.spread_prefetch, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.spread_prefetch = 2);
    ck_plan_refuses(plan, bad.prefetch_rows = 0, bad.pv_prefetch = 0); /* the spread without the prefetch */
    plan_tuned("spread_prefetch=0", &p, &intel, &plan);
    ck_assert_int_eq(plan.spread_prefetch, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan_tuned("prefetch_rows=0", &p, &intel, &plan);
    ck_assert_int_eq(plan.spread_prefetch, 0);
    /* the CPU row (AMD's measurements) alike */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.spread_prefetch, 1);
    plan_tuned("spread_prefetch=0", &p, &pocl, &plan);
    ck_assert_int_eq(plan.spread_prefetch, 0);
    /* AVX2: all heads (the rows rule alone) but the row-by-row form, asked for or not */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.vector_registers, 16);
    ck_assert_int_eq(plan.spread_prefetch, 0);
    ck_plan_refuses(plan, bad.spread_prefetch = 1);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.spread_prefetch, 0);
    /* one KV head per work-group (BNSD): nothing to spread */
    p.layout = IFA_LAYOUT_BNSD;
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 1);
    ck_assert_int_eq(plan.spread_prefetch, 0);
    ck_plan_refuses(plan, bad.spread_prefetch = 1);
}
END_TEST

/* P.V's next-chunk prefetch: with the software prefetch only, where one KV head's query rows (G x S1) are at
 * most 64 with 32 registers (Intel's row 4) and 4 with 16 (since 2026-11-28 (Zen 3); Intel's row 2); with
 * paged KV only up to the row's own count (the CPU row 2, Intel's 0); the shared prefix pass by its own rows;
 * IFA_TUNING moves the limits; the plan check refuses it without the prefetch or outside 0/1. */
START_TEST(pv_prefetch_rule) {
    ifa_problem p = problem(2, 8, 8, 128, 4096); /* G = 1 */
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    p.num_heads = 16; /* G = 2 */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    p.seq_q = 2; /* 4 rows per KV head */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    plan_tuned("pv_prefetch_rows_16=2", &p, &avx2, &plan); /* the limit before */
    ck_assert_int_eq(plan.pv_prefetch, 0);
    p.seq_q = 3; /* 6 rows */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    p.seq_q = 1, p.num_heads = 64; /* G = 8 */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1); /* Intel's row took the CPU row's 64 rows (Emerald Rapids, 2026-11-30) */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    p.num_heads = 512; /* G = 64: the last the AVX-512 rows take */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    p.seq_q = 2; /* 128 rows */
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    p.seq_q = 1, p.num_heads = 64;
    p.layout = IFA_LAYOUT_BSND; /* all 8 KV heads per work-group on AVX2: still the rows of one head */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    p.num_heads = 8; /* G = 1, all heads: 8 rows per work-group, 1 per head */
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.kv_heads_per_group, 8);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    plan_tuned("pv_prefetch_rows_16=0", &p, &avx2, &plan);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    p.num_heads = 64;
    plan_tuned("pv_prefetch_rows=4", &p, &pocl, &plan); /* the limit before */
    ck_assert_int_eq(plan.pv_prefetch, 0);
    plan_tuned("pv_prefetch_rows=8", &p, &pocl, &plan);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    plan_tuned("prefetch_rows=0", &p, &pocl, &plan); /* no prefetch: none in P.V either */
    ck_assert_int_eq(plan.pv_prefetch, 0);
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    /* paged KV, G = 1: the CPU row prefetches, Intel's row only when IFA_TUNING says so */
    p = problem(2, 8, 8, 128, 4096);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1); /* contiguous */
    p.paged = 1, p.block_size = 16, p.table_cols = 256, p.pool_blocks = 512;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    ck_assert_int_gt(plan.prefetch_rows, 0); /* the score pass still prefetches */
    plan_tuned("pv_prefetch_paged=1", &p, &intel, &plan);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    /* paged, G = 2 and 4: the CPU row's 2 rows, with either register file, where contiguous KV takes 4 */
    p.num_heads = 16;
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    p.num_heads = 32;
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 0);
    plan_tuned("pv_prefetch_paged=4", &p, &avx2, &plan);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    p.paged = 0, p.block_size = 0, p.table_cols = 0, p.pool_blocks = 0;
    ck_assert_int_eq(ifa__plan_make(&p, &avx2, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_make(&p, &intel, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1); /* 32 registers: pv_prefetch_rows */
    /* the prefix pass: B x G rows per KV head */
    p = problem(1, 8, 8, 128, 256);
    p.has_prefix = 1, p.prefix_seq = p.prefix_len = 4096;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefix_pv_prefetch, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.batch = 128;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.pv_prefetch, 1);
    ck_assert_int_eq(plan.prefix_pv_prefetch, 0);
    ck_plan_refuses(plan, bad.prefix_pv_prefetch = 2);
    ck_plan_refuses(plan, bad.pv_prefetch = 2);
    ck_plan_refuses(plan, bad.prefetch_rows = 0); /* P.V's prefetch without the prefetch */
    p.has_prefix = 0;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.prefix_pv_prefetch = 1); /* no prefix pass */
}
END_TEST

/* The grid's order: batch first on the CPU row (PoCL deals contiguous runs of work-groups), block first on
 * GPUs; IFA_TUNING turns it either way; the plan check refuses anything but 0 or 1. */
START_TEST(batch_fast_rule) {
    ifa_problem p = problem(8, 32, 8, 128, 4096);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.batch_fast, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    ck_plan_refuses(plan, bad.batch_fast = 2);
    /* the per-field rules of include/ifa/plan_fields.h name the field */
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "plan field batch_fast is 2; it must be 0 or 1"));
    ck_plan_refuses(plan, bad.problem.has_lse = -1);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "plan field has_lse is -1; it must be 0 or 1"));
    ck_plan_refuses(plan, bad.problem.reserved1 = 7);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "plan field reserved1 is 7; padding must be 0"));
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.batch_fast, 0);
    plan_tuned("batch_fast=0", &p, &pocl, &plan);
    ck_assert_int_eq(plan.batch_fast, 0);
}
END_TEST

/* The vector shape follows the CPU: its width is at most the device's native float width, and its register
 * tiles fit 32 registers (AVX-512, unknown width) or 16 (AVX2: native width 8). */
START_TEST(vector_shape_follows_native_width) {
    static const struct {
        int32_t native, d, g, vw, regs, score_rows, pv_rows, pv_block;
    } cases[] = {
        {0, 128, 4, 16, 32, 4, 4, 4},  {16, 128, 4, 16, 32, 4, 4, 4}, {8, 128, 4, 8, 16, 2, 4, 2},
        {8, 128, 1, 8, 16, 2, 1, 4},   {8, 128, 8, 8, 16, 2, 2, 4},   {8, 128, 16, 8, 16, 2, 2, 4},
        {16, 64, 16, 16, 32, 4, 8, 1}, {4, 64, 4, 4, 32, 4, 4, 4},    {8, 40, 4, 8, 16, 2, 4, 2},
        {16, 40, 4, 8, 32, 4, 4, 4},   {8, 4, 4, 4, 16, 2, 4, 2},     {8, 256, 16, 8, 16, 2, 2, 4},
        {8, 64, 6, 8, 16, 2, 2, 4},    {16, 128, 8, 16, 32, 4, 8, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        ifa_device_facts cpu = pocl;
        cpu.native_float_width = cases[i].native;
        ifa_problem p = problem(1, 8 * cases[i].g, 8, cases[i].d, 4096);
        p.layout = IFA_LAYOUT_BNSD; /* one KV head per work-group: tiles of G rows */
        ifa_plan plan;
        ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
        ck_assert_msg(plan.vector_width == cases[i].vw && plan.vector_registers == cases[i].regs &&
                          plan.score_rows == cases[i].score_rows && plan.pv_rows == cases[i].pv_rows &&
                          plan.pv_block == cases[i].pv_block,
                      "case %zu: vector_width %d, vector_registers %d, score_rows %d, pv_rows %d, pv_block %d", i,
                      plan.vector_width, plan.vector_registers, plan.score_rows, plan.pv_rows, plan.pv_block);
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
        ifa_plan bad = plan;
        bad.score_rows = 0;
        ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_INVALID_PLAN);
        ck_assert_ptr_nonnull(strstr(ifa_last_error(), "score_rows 0"));
        bad.score_rows = 5;
        ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_INVALID_PLAN);
        ck_assert_ptr_nonnull(strstr(ifa_last_error(), "score_rows 5"));
        ck_plan_refuses(plan, bad.pv_rows = i % 2 ? 0 : 9);
        ck_assert_ptr_nonnull(strstr(ifa_last_error(), i % 2 ? "pv_rows 0" : "pv_rows 9"));
    }
    /* values that cost more than float16 to convert keep 8-row P.V blocks on AVX2 (one conversion per 8 rows) */
    {
        ifa_device_facts cpu = pocl;
        cpu.native_float_width = 8;
        ifa_problem p = problem(1, 128, 8, 128, 4096);
        p.layout = IFA_LAYOUT_BNSD;
        p.kv_dtype = IFA_DTYPE_BFLOAT16;
        ifa_plan plan;
        ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
        ck_assert_int_eq(plan.pv_rows, 8);
        ck_assert_int_eq(plan.pv_block, 1);
        /* int8 values take 4-row blocks of 2 vectors (G = 16 and 8); not where 4 rows do not divide the tile */
        static const struct {
            int64_t n, d;
            ifa_layout layout;
            int32_t pv_rows, pv_block;
        } i8[] = {{128, 128, IFA_LAYOUT_BNSD, 4, 2}, {64, 256, IFA_LAYOUT_BSH, 4, 2}, {48, 64, IFA_LAYOUT_BNSD, 6, 1}};
        for (size_t i = 0; i < sizeof i8 / sizeof i8[0]; ++i) {
            ifa_problem q = problem(1, i8[i].n, 8, i8[i].d, 4096);
            q.layout = i8[i].layout;
            q.kv_dtype = IFA_DTYPE_INT8;
            ck_assert_int_eq(ifa__plan_make(&q, &cpu, &plan), IFA_STATUS_OK);
            ck_assert_msg(plan.pv_rows == i8[i].pv_rows && plan.pv_block == i8[i].pv_block,
                          "int8 case %zu: pv_rows %d pv_block %d", i, plan.pv_rows, plan.pv_block);
        }
        p.kv_dtype = IFA_DTYPE_INT8;
        /* AVX-512's 32 registers keep the 8-row blocks, one vector each (pv_block_8rows) where the values need
         * converting; fp32 values, the Intel row and the row without the column keep pv_block's two */
        cpu.native_float_width = 16;
        ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
        ck_assert_int_eq(plan.pv_rows, 8);
        ck_assert_int_eq(plan.pv_block, 1);
        static const ifa_dtype converted[] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16, IFA_DTYPE_INT4,
                                              IFA_DTYPE_FLOAT8_E4M3, IFA_DTYPE_FLOAT8_E5M2};
        for (size_t i = 0; i < sizeof converted / sizeof converted[0]; ++i) {
            p.kv_dtype = converted[i];
            ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
            ck_assert_msg(plan.pv_rows == 8 && plan.pv_block == 1, "dtype %d: pv_rows %d pv_block %d",
                          (int)converted[i], plan.pv_rows, plan.pv_block);
        }
        p.kv_dtype = IFA_DTYPE_FLOAT32;
        ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
        ck_assert_int_eq(plan.pv_block, 2);
        p.kv_dtype = IFA_DTYPE_FLOAT16;
        plan_tuned("pv_block_8rows=0", &p, &cpu, &plan);
        ck_assert_int_eq(plan.pv_block, 2);
        plan_tuned("pv_block_8rows=4", &p, &cpu, &plan); /* halved to fit half the registers: 8 x 2 */
        ck_assert_int_eq(plan.pv_block, 2);
        ifa_device_facts xeon = intel;
        xeon.native_float_width = 16;
        ck_assert_int_eq(ifa__plan_make(&p, &xeon, &plan), IFA_STATUS_OK);
        ck_assert_int_eq(plan.pv_rows, 8);
        ck_assert_int_eq(plan.pv_block, 2);
        /* 4-row blocks keep pv_block's 4 vectors (G = 4) */
        ifa_problem g4 = problem(1, 32, 8, 128, 4096);
        g4.layout = IFA_LAYOUT_BNSD;
        ck_assert_int_eq(ifa__plan_make(&g4, &cpu, &plan), IFA_STATUS_OK);
        ck_assert_int_eq(plan.pv_rows, 4);
        ck_assert_int_eq(plan.pv_block, 4);
    }
    /* several KV heads per work-group (BSND on a CPU): P.V blocks stay within one head's rows */
    {
        ifa_device_facts cpu = pocl;
        cpu.native_float_width = 8;
        ifa_problem p = problem(1, 32, 8, 128, 4096);
        p.layout = IFA_LAYOUT_BSND;
        ifa_plan plan;
        ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
        ck_assert_int_gt(plan.kv_heads_per_group, 1);
        ck_assert_int_eq(plan.pv_rows, 4);
        plan.pv_rows = 3; /* does not divide one head's 4 rows */
        ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_INVALID_PLAN);
        ck_assert_ptr_nonnull(strstr(ifa_last_error(), "pv_rows 3"));
    }
    /* the work-group shape (GPU rows) has no register tiles */
    ifa_problem p = problem(1, 32, 8, 128, 4096);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_width, 1);
    ck_assert_int_eq(plan.score_rows, 0);
    ck_assert_int_eq(plan.pv_rows, 0);
    ck_assert_int_eq(plan.vector_registers, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
}
END_TEST

/* value_head_dim: DeepSeek's MLA decode (N = 128 query heads on one latent KV head, D = 576, D_v = 512) fits
 * its rows with D + D_v per row, sizes the partials by D_v, and keeps the vector to a width dividing both;
 * a plan with D_v past D is refused. */
START_TEST(value_dim_sizes_rows_and_partials) {
    ifa_problem p = problem(1, 128, 1, 576, 32768);
    p.value_dim = 512;
    ifa_plan plan;
    plan_tuned("cv_min_rows=0", &p, &h100, &plan); /* the all-vector template's sizes */
    ck_assert_int_le(plan.local_mem_bytes, h100.local_mem_bytes);
    /* the lane shape on NVIDIA (3 chunks of 8 key columns a lane: 2 rows a head group) */
    ck_assert_int_eq(plan.lanes, 2);
    ck_assert_int_eq(plan.heads_per_group, 2);
    ck_assert_int_eq(plan.local_mem_bytes,
                     ifa__all_vector_local_bytes(plan.heads_per_group, 1, 576, 512, plan.chunk_rows) +
                         ifa__lanes_local_bytes(plan.heads_per_group, 576, plan.work_group_size, plan.lanes, 1));
    ck_assert_int_ne(plan.split_kv, 0);
    ck_assert_int_eq(plan.ws_part_m_offset - plan.ws_part_acc_offset,
                     (4 * 128 * (int64_t)plan.max_splits * 512 + IFA_WORKSPACE_ALIGN - 1) / IFA_WORKSPACE_ALIGN *
                         IFA_WORKSPACE_ALIGN);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan.problem.value_dim = 577;
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_INVALID_PLAN);
    /* a CPU of 16 lanes: D = 48 allows 16, D_v = 24 only 8 */
    ifa_device_facts avx512 = pocl;
    avx512.native_float_width = 16;
    p = problem(1, 8, 2, 48, 4096);
    p.value_dim = 24;
    ck_assert_int_eq(ifa__plan_make(&p, &avx512, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_width, 8);
    p.value_dim = 0; /* 0 is D: the vector follows D alone */
    ck_assert_int_eq(ifa__plan_make(&p, &avx512, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.vector_width, 16);
}
END_TEST

/* IFA_DEVICE_FACTS overrides only what every kernel still runs under: any compute-unit count, a power-of-2
 * native width up to 16, local memory or work-group size no larger than the device's own, and the vendor
 * between the two CPU rows. */
START_TEST(device_facts_overrides) {
    const ifa_device_facts dev = {IFA_VENDOR_CPU, 2, 4096, 8, 512 * 1024, 0};
    setenv("IFA_DEVICE_FACTS", "compute_units=64,native_float_width=16,local_mem_bytes=99999999,bogus=3,"
                               "max_work_group_size=1,native_float_width=12", 1);
    ifa_device_facts e = ifa__device_facts_effective(&dev);
    ck_assert_int_eq(e.compute_units, 64);
    ck_assert_int_eq(e.native_float_width, 16);          /* 12 is not a power of 2 */
    ck_assert_int_eq(e.local_mem_bytes, dev.local_mem_bytes); /* more than the device has */
    ck_assert_int_eq(e.max_work_group_size, 1);
    ck_assert_int_eq(e.vendor, IFA_VENDOR_CPU);
    setenv("IFA_DEVICE_FACTS", "vendor=3", 1); /* from one CPU row to the other */
    ck_assert_int_eq(ifa__device_facts_effective(&dev).vendor, IFA_VENDOR_CPU_INTEL);
    ifa_device_facts as_intel = dev;
    as_intel.vendor = IFA_VENDOR_CPU_INTEL;
    setenv("IFA_DEVICE_FACTS", "vendor=2", 1);
    ck_assert_int_eq(ifa__device_facts_effective(&as_intel).vendor, IFA_VENDOR_CPU);
    setenv("IFA_DEVICE_FACTS", "vendor=1", 1); /* a GPU row: not for a CPU */
    ck_assert_int_eq(ifa__device_facts_effective(&dev).vendor, IFA_VENDOR_CPU);
    setenv("IFA_DEVICE_FACTS", "vendor=4", 1);
    ck_assert_int_eq(ifa__device_facts_effective(&dev).vendor, IFA_VENDOR_CPU);
    const ifa_device_facts gpu = {IFA_VENDOR_NVIDIA, 132, 1024, 0, 48 * 1024, 90};
    setenv("IFA_DEVICE_FACTS", "vendor=3", 1); /* nor a CPU row for a GPU */
    ck_assert_int_eq(ifa__device_facts_effective(&gpu).vendor, IFA_VENDOR_NVIDIA);
    setenv("IFA_DEVICE_FACTS", "compute_units=0,local_mem_bytes=65536,native_float_width=32", 1);
    e = ifa__device_facts_effective(&dev);
    ck_assert_int_eq(e.compute_units, 2);
    ck_assert_int_eq(e.local_mem_bytes, 65536);
    ck_assert_int_eq(e.native_float_width, 8);
    /* the same parser reports what it skipped (ifa-soak --facts): the first such entry, the rest still applied */
    char err[300] = "";
    e = dev;
    ck_assert_int_eq(ifa__device_facts_apply(&e, &dev, "compute_units=64,native_float_width=16", err, sizeof err), 0);
    ck_assert_int_eq(e.compute_units, 64);
    ck_assert_str_eq(err, "");
    e = dev;
    ck_assert_int_eq(ifa__device_facts_apply(&e, &dev, "native_float_width=12,bogus=3,compute_units=16", err,
                                             sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "\"native_float_width=12\" is not key=integer"));
    ck_assert_int_eq(e.compute_units, 16);
    ck_assert_int_eq(e.native_float_width, dev.native_float_width);
    ck_assert_int_eq(ifa__device_facts_apply(&e, &gpu, "vendor=3", NULL, 0), -1);
    ck_assert_int_eq(ifa__device_facts_apply(&e, &dev, "compute_units", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "\"compute_units\""));
    unsetenv("IFA_DEVICE_FACTS");
    e = ifa__device_facts_effective(&dev);
    /* field by field, not the struct's bytes: its 4 bytes of trailing padding are whatever the copy left there
     * (a pointer's bytes in the sanitizer build at -O1) */
    ck_assert_int_eq(e.vendor, dev.vendor);
    ck_assert_int_eq(e.compute_units, dev.compute_units);
    ck_assert_int_eq(e.max_work_group_size, dev.max_work_group_size);
    ck_assert_int_eq(e.native_float_width, dev.native_float_width);
    ck_assert_int_eq(e.local_mem_bytes, dev.local_mem_bytes);
    ck_assert_int_eq(e.compute_capability, dev.compute_capability);
}
END_TEST

/* Rows that fit local memory once the chunk shrinks keep one head group at a smaller chunk; rows that do not
 * fit even at the smallest chunk keep the full chunk and split the heads (an AVX2 CPU's 512 KiB). */
START_TEST(chunk_shrinks_only_where_it_avoids_a_split) {
    ifa_device_facts cpu = pocl;
    cpu.local_mem_bytes = 512 * 1024, cpu.native_float_width = 8;
    ifa_plan full;
    ifa_problem p = problem(1, 8, 1, 64, 4096);
    ck_assert_int_eq(ifa__plan_make(&p, &cpu, &full), IFA_STATUS_OK); /* the tuning row's chunk, unshrunk */
    p = problem(1, 128, 1, 480, 4096); /* D = D_v = 480: fits at a smaller chunk */
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.head_groups, 1);
    ck_assert_int_lt(plan.chunk_rows, full.chunk_rows);
    p = problem(1, 128, 1, 576, 4096); /* MLA, G = 128: split either way */
    p.value_dim = 512;
    ck_assert_int_eq(ifa__plan_make(&p, &cpu, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.head_groups, 2);
    ck_assert_int_eq(plan.chunk_rows, full.chunk_rows);
    ck_assert_int_le(plan.local_mem_bytes, cpu.local_mem_bytes);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
}
END_TEST

/* S1 query tokens multiply the rows a work-group holds: the planner fits heads x tokens in local memory and
 * sizes the split partials per token. */
START_TEST(multi_token_rows_fit_and_size_partials) {
    ifa_problem p = problem(1, 32, 4, 128, 32768);
    p.seq_q = 16, p.causal = 1;
    ifa_plan plan;
    plan_tuned("cv_min_rows=0,mma=0,lanes=0", &p, &h100, &plan); /* the all-vector template's rows (work-group shape) */
    ck_assert_int_le(plan.local_mem_bytes, h100.local_mem_bytes);
    ck_assert_int_eq(plan.local_mem_bytes, ifa__all_vector_local_bytes(plan.heads_per_group, 16, 128, 128, plan.chunk_rows));
    ck_assert_int_gt(plan.head_groups, 1); /* 8 heads x 16 tokens x 128 dims do not fit 48 KiB together */
    ck_assert_int_ne(plan.split_kv, 0);
    ck_assert_int_ge(plan.ws_part_m_offset - plan.ws_part_acc_offset, 4 * 32 * 16 * plan.max_splits * 128);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan.problem.seq_q = 17;
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_INVALID_PLAN);
    /* the NVIDIA row: one head a group in the lane shape, the query's columns from local memory (16 rows), one fp32
     * key row a step (lane_fp32_step_rows) */
    p.kv_dtype = IFA_DTYPE_FLOAT32;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.lanes, 1);
    ck_assert_int_eq(plan.heads_per_group, 1);
    ck_assert_int_eq(plan.lane_q_local, 1);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
}
END_TEST

/* Where not even one head's rows fit the device's local memory (D = 512 with 16 query tokens against an H100's 48
 * KiB) and the caller leaves the template to the planner, the cv template takes the case; forced to all_vector
 * it stays refused (DEVICE_LIMIT), and a case cv cannot run keeps all_vector's refusal. */
START_TEST(device_limit_falls_back_to_cv) {
    ifa_problem p = problem(2, 32, 8, 512, 1024);
    p.seq_q = 16, p.causal = 1;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.template_id, IFA_TEMPLATE_CV);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    p.template_request = IFA_TEMPLATE_ALL_VECTOR;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_DEVICE_LIMIT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "local memory"));
    p.template_request = 0, p.has_prefix = 1, p.prefix_seq = p.prefix_len = 256; /* cv cannot: the refusal stays */
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_DEVICE_LIMIT);
    p.has_prefix = 0, p.prefix_seq = p.prefix_len = 0, p.seq_q = 1; /* fits: all_vector as before */
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.template_id, IFA_TEMPLATE_ALL_VECTOR);
}
END_TEST

/* Paged KV: the key marks it, the block table has its workspace region, and equal splits start on block
 * boundaries when the block size is a multiple of the chunk. */
START_TEST(paged_plan) {
    ifa_problem p = problem(2, 32, 8, 128, 65536);
    p.paged = 1, p.block_size = 512, p.table_cols = 128, p.pool_blocks = 300;
    p.lengths_mode = IFA_LENGTHS_UNIFORM, p.uniform_length = p.max_length = 50000, p.total_length = 100000;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.tiling_key / 100000000 % 10, 1);
    ck_assert_int_eq(plan.ws_table_bytes, 4 * 2 * 128);
    ck_assert_int_eq(plan.ws_table_offset % IFA_WORKSPACE_ALIGN, 0);
    ck_assert_int_ne(plan.split_kv, 0);
    ck_assert_int_eq(plan.split_tokens % 512, 0);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    plan.workspace_bytes = plan.ws_table_offset; /* no room for the table */
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_INVALID_PLAN);
    /* a block size that is not a multiple of the chunk leaves the splits on chunk boundaries */
    p.block_size = 100, p.table_cols = 655;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.split_tokens % plan.chunk_rows, 0);
}
END_TEST

/* The rows a block reads: a sliding window shortens every batch to window (+ S1 - 1 for causal tokens). */
START_TEST(window_bounds_the_rows_read) {
    ck_assert_int_eq(ifa__kv_lo(1000, 0, 0), 0);
    ck_assert_int_eq(ifa__kv_span(1000, 100, 0), 100);
    ck_assert_int_eq(ifa__kv_span(1000, 100, 3), 103); /* the earliest of 4 causal tokens ends 3 rows earlier */
    ck_assert_int_eq(ifa__kv_span(50, 100, 3), 50);
    ck_assert_int_eq(ifa__kv_span(2, 1, 7), 2);         /* rows end before 0: nothing to skip */
    ck_assert_int_eq(ifa__kv_span(0, 5, 0), 0);
}
END_TEST

/* Shared prefix: the prefix pass holds B x G rows per KV head in as few work-groups as local memory allows,
 * every row gets a prefix slot before its splits, and the key's mode digit says so. */
START_TEST(shared_prefix_plan) {
    ifa_problem p = problem(32, 32, 8, 128, 256);
    p.has_prefix = 1, p.prefix_seq = p.prefix_len = 4096;
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.prefix_slots, 1);
    ck_assert_int_eq(plan.split_kv, IFA_SPLIT_PARTIAL_ROWMAX);
    ck_assert_int_ge(plan.max_splits, 1);
    ck_assert_int_eq((int64_t)plan.prefix_heads_per_group * plan.prefix_head_groups >= 32 * 4, 1);
    ck_assert_int_eq(plan.prefix_head_groups, 1); /* 1 MiB and more of local memory: the prefix is read once */
    ck_assert_int_eq(plan.tiling_key / 10000000000ull % 10, 2);
    ck_assert_int_ge(plan.workspace_bytes, plan.ws_part_l_offset + 4 * 32 * 32 * (plan.max_splits + 1));
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    /* 48 KiB: the 128 rows need several work-groups, each a pass over the prefix */
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_gt(plan.prefix_head_groups, 1);
    ck_assert_int_lt(plan.prefix_head_groups, 32);
    ck_assert_int_le(ifa__all_vector_local_bytes(plan.prefix_heads_per_group, 1, 128, 128, plan.chunk_rows),
                     h100.local_mem_bytes);
    plan.prefix_slots = 0; /* a prefix plan without its slot is corrupt */
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_INVALID_PLAN);
}
END_TEST

int main(void) {
    Suite *s = suite_create("tiling");
    TCase *t = test_tcase_create("planner");
    tcase_add_test(t, key_round_trip_over_legal_values);
    tcase_add_test(t, key_rejects_illegal);
    tcase_add_test(t, plan_fits_local_memory);
    tcase_add_test(t, plan_refuses_what_cannot_fit);
    tcase_add_test(t, plan_work_group_within_device);
    tcase_add_test(t, workspace_layout);
    tcase_add_test(t, tuning_env_override);
    tcase_add_test(t, tuning_apply_reports_bad_entries);
    tcase_add_test(t, tuning_rows_round_trip);
    tcase_add_test(t, prefetch_rows_rule);
    tcase_add_test(t, pv_prefetch_rule);
    tcase_add_test(t, spread_prefetch_rule);
    tcase_add_test(t, multi_head_prefetch_distance);
    tcase_add_test(t, multi_heads_intel_row_and_fill);
    tcase_add_test(t, batch_fast_rule);
    tcase_add_test(t, vector_shape_follows_native_width);
    tcase_add_test(t, vector_loads_rule);
    tcase_add_test(t, key_tile_rule);
    tcase_add_test(t, lanes_rule);
    tcase_add_test(t, lane_scores_rule);
    tcase_add_test(t, mma_rule);
    tcase_add_test(t, mma_transposed_rule);
    tcase_add_test(t, small_grid_rule);
    tcase_add_test(t, split_fill_rule);
    tcase_add_test(t, fused_combine_rule);
    tcase_add_test(t, split_kv_decisions);
    tcase_add_test(t, split_floor_by_work);
    tcase_add_test(t, balanced_units);
    tcase_add_test(t, fused_balanced_rule);
    tcase_add_test(t, unit_cuts_partition_the_cost_line);
    tcase_add_test(t, balanced_walk_covers_every_row_once);
    tcase_add_test(t, multi_token_rows_fit_and_size_partials);
    tcase_add_test(t, value_dim_sizes_rows_and_partials);
    tcase_add_test(t, chunk_shrinks_only_where_it_avoids_a_split);
    tcase_add_test(t, device_facts_overrides);
    tcase_add_test(t, paged_plan);
    tcase_add_test(t, window_bounds_the_rows_read);
    tcase_add_test(t, shared_prefix_plan);
    tcase_add_test(t, cv_plan);
    tcase_add_test(t, template_choice);
    tcase_add_test(t, multi_head_blocks);
    tcase_add_test(t, nvidia_row_every_plan_in_a_gpu_shape);
    tcase_add_test(t, mla_tile_rule);
    tcase_add_test(t, lane_fp32_step_rows);
    tcase_add_test(t, device_limit_falls_back_to_cv);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
