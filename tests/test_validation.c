/* Every invalid argument returns its status and a message naming the argument; nothing is written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tiling/planner.h"

/* A valid BSH case: B=2, N=8, N_kv=2, D=16, S=32, fp16, with LSE. Buffers NULL (planning only). */
typedef struct fixture {
    ifa_tensor q, k, v, o, lse, mask, pse, aqs, aqo, qs2, qo2, kp, vp, rc, rs, sinks, alibi, kas, kao, vas, vao;
    int64_t prefix_len;
    int64_t rope_pos[2];
    int64_t lens[2];
    int64_t pad;
    int32_t table[2 * 4];
    ifa_incre_flash_attention_args a;
} fixture;


/* Plans a (get_workspace_size must take it) into *plan; returns the workspace bytes. */
static size_t planned(const ifa_incre_flash_attention_args *a, ifa_plan *plan) {
    size_t ws = 0;
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), a, plan, &ws), IFA_STATUS_OK);
    return ws;
}

static void tensor(ifa_tensor *t, ifa_dtype dt, int nd, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = nd;
    t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
}

static void setup(fixture *f) {
    tensor(&f->q, IFA_DTYPE_FLOAT16, 3, 2, 1, 128, 0);
    tensor(&f->k, IFA_DTYPE_FLOAT16, 3, 2, 32, 32, 0);
    tensor(&f->v, IFA_DTYPE_FLOAT16, 3, 2, 32, 32, 0);
    tensor(&f->o, IFA_DTYPE_FLOAT16, 3, 2, 1, 128, 0);
    tensor(&f->lse, IFA_DTYPE_FLOAT32, 3, 2, 8, 1, 0);
    f->lens[0] = 32, f->lens[1] = 7;
    ifa_incre_flash_attention_args_init(&f->a);
    f->a.query = &f->q, f->a.key = &f->k, f->a.value = &f->v, f->a.attention_out = &f->o, f->a.softmax_lse = &f->lse;
    f->a.num_heads = 8, f->a.num_key_value_heads = 2, f->a.scale_value = 0.25;
    f->a.actual_seq_lengths = f->lens, f->a.actual_seq_lengths_count = 2;
}

/* Plans f and expects status want with every needle in the message. */
static void expect(const fixture *f, ifa_status want, const char *needle) {
    ifa_plan plan;
    size_t ws = 12345;
    ifa_status st = ifa_incre_flash_attention_get_workspace_size(test_ctx(), &f->a, &plan, &ws);
    ck_assert_msg(st == want, "got %s (%s), want %s", ifa_status_name(st), ifa_last_error(), ifa_status_name(want));
    if (want == IFA_STATUS_OK) return;
    if (needle) ck_assert_msg(strstr(ifa_last_error(), needle), "message \"%s\" lacks \"%s\"", ifa_last_error(), needle);
    ck_assert_msg(strncmp(ifa_last_error(), ifa_status_name(want), strlen(ifa_status_name(want))) == 0,
                  "message \"%s\" does not start with the status name", ifa_last_error());
}

START_TEST(valid_fixture_plans) {
    fixture f;
    setup(&f);
    ifa_plan plan;
    const size_t ws = planned(&f.a, &plan);
    ck_assert_uint_ge(ws, 2 * sizeof(cl_int));
    ck_assert_int_eq(plan.problem.head_dim, 16);
    ck_assert_int_eq(plan.problem.lengths_mode, IFA_LENGTHS_PER_BATCH);
}
END_TEST

START_TEST(null_arguments) {
    fixture f;
    setup(&f);
    ifa_plan plan;
    size_t ws;
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(NULL, &f.a, &plan, &ws), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), NULL, &plan, &ws), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "args"));
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &f.a, NULL, &ws), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &f.a, &plan, NULL), IFA_STATUS_NULL_ARGUMENT);
    f.a.query = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "query");
    setup(&f), f.a.key = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "key");
    setup(&f), f.a.value = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "value");
    setup(&f), f.a.attention_out = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "attention_out");
    setup(&f), f.a.input_layout = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "input_layout");
    setup(&f), f.a.actual_seq_lengths = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "actual_seq_lengths");
}
END_TEST

/* prepare validates its arguments as planning does (the same status and message), then builds; the count of
 * kernel sets is optional. */
START_TEST(prepare_validates_as_planning) {
    fixture f;
    setup(&f);
    int64_t sets = -1;
    ck_assert_int_eq(ifa_incre_flash_attention_prepare(NULL, &f.a, NULL, &sets), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "ctx"));
    ck_assert_int_eq(sets, 0);
    ck_assert_int_eq(ifa_incre_flash_attention_prepare(test_ctx(), NULL, NULL, &sets), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "args"));
    f.a.num_heads = 3; /* not a multiple of num_key_value_heads */
    expect(&f, IFA_STATUS_INVALID_HEADS, "num_heads");
    char planned[512];
    snprintf(planned, sizeof planned, "%s", ifa_last_error());
    ck_assert_int_eq(ifa_incre_flash_attention_prepare(test_ctx(), &f.a, test_queue(), &sets), IFA_STATUS_INVALID_HEADS);
    ck_assert_str_eq(ifa_last_error(), planned);
    setup(&f), f.lens[1] = 33; /* past S_kv */
    ck_assert_int_eq(ifa_incre_flash_attention_prepare(test_ctx(), &f.a, test_queue(), &sets), IFA_STATUS_INVALID_SEQ_LENGTHS);
    setup(&f);
    ck_assert_int_eq(ifa_incre_flash_attention_prepare(test_ctx(), &f.a, test_queue(), &sets), IFA_STATUS_OK);
    ck_assert_int_ge(sets, 1);
    ck_assert_int_eq(ifa_incre_flash_attention_prepare(test_ctx(), &f.a, NULL, NULL), IFA_STATUS_OK);
}
END_TEST

START_TEST(malformed_descriptors) {
    fixture f;
    setup(&f), f.q.ndim = 0;
    expect(&f, IFA_STATUS_INVALID_TENSOR, "query has ndim 0");
    setup(&f), f.k.ndim = 9;
    expect(&f, IFA_STATUS_INVALID_TENSOR, "key has ndim 9");
    setup(&f), f.v.shape[1] = 0;
    expect(&f, IFA_STATUS_INVALID_TENSOR, "value has dimension 1 = 0");
    setup(&f), f.o.shape[2] = -128;
    expect(&f, IFA_STATUS_INVALID_TENSOR, "attention_out");
    setup(&f), f.q.dtype = (ifa_dtype)99;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "query has dtype value 99");
    setup(&f), f.k.offset = 3;
    expect(&f, IFA_STATUS_INVALID_OFFSET, "key has byte offset 3");
    setup(&f), f.lse.ndim = 0;
    expect(&f, IFA_STATUS_INVALID_TENSOR, "softmax_lse");
    setup(&f), f.k.shape[0] = f.k.shape[1] = f.k.shape[2] = INT64_MAX / 4;
    expect(&f, IFA_STATUS_UNSUPPORTED_SHAPE, "key");
}
END_TEST

START_TEST(layout_and_rank) {
    fixture f;
    setup(&f), f.a.input_layout = "SBH";
    expect(&f, IFA_STATUS_INVALID_LAYOUT, "\"SBH\"");
    setup(&f), f.a.input_layout = "bsh";
    expect(&f, IFA_STATUS_INVALID_LAYOUT, "input_layout");
    setup(&f), f.q.ndim = 4, f.q.shape[3] = 1;
    expect(&f, IFA_STATUS_INVALID_RANK, "query has rank 4");
    setup(&f), f.k.ndim = 2;
    expect(&f, IFA_STATUS_INVALID_RANK, "key has rank 2");
    setup(&f), f.v.ndim = 4, f.v.shape[3] = 1;
    expect(&f, IFA_STATUS_INVALID_RANK, "value");
    setup(&f), f.o.ndim = 2;
    expect(&f, IFA_STATUS_INVALID_RANK, "attention_out");
    setup(&f), f.a.input_layout = "BNSD";
    expect(&f, IFA_STATUS_INVALID_RANK, "needs rank 4 (B, N, S1, D)");
    setup(&f), f.lse.ndim = 2;
    expect(&f, IFA_STATUS_INVALID_RANK, "softmax_lse has rank 2");
}
END_TEST

START_TEST(heads) {
    fixture f;
    setup(&f), f.a.num_heads = 0;
    expect(&f, IFA_STATUS_INVALID_HEADS, "num_heads = 0");
    setup(&f), f.a.num_heads = 5000;
    expect(&f, IFA_STATUS_INVALID_HEADS, "num_heads = 5000");
    setup(&f), f.a.num_key_value_heads = -1;
    expect(&f, IFA_STATUS_INVALID_HEADS, "num_key_value_heads = -1");
    setup(&f), f.a.num_key_value_heads = 300;
    expect(&f, IFA_STATUS_INVALID_HEADS, "num_key_value_heads = 300");
    setup(&f), f.a.num_key_value_heads = 3;
    expect(&f, IFA_STATUS_INVALID_HEADS, "does not divide num_heads = 8");
    setup(&f), f.a.num_heads = 6, f.a.num_key_value_heads = 3; /* 128 % 6 != 0 */
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "not a multiple of num_heads");
    setup(&f), f.a.input_layout = "BSND";
    tensor(&f.q, IFA_DTYPE_FLOAT16, 4, 2, 1, 4, 32), f.o = f.q; /* 4 heads, num_heads 8 */
    tensor(&f.k, IFA_DTYPE_FLOAT16, 4, 2, 32, 2, 16), f.v = f.k;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "has 4 heads but num_heads = 8");
}
END_TEST

START_TEST(shapes) {
    fixture f;
    setup(&f), f.q.shape[1] = 17, f.o.shape[1] = 17, f.lse.shape[2] = 17;
    expect(&f, IFA_STATUS_UNSUPPORTED_SHAPE, "17 tokens per batch (S1); IncreFlashAttention takes 1 to 16");
    setup(&f), f.q.shape[1] = 2, f.o.shape[1] = 2;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "softmax_lse has shape (2, 8, 1); it must be (B, N, S1) = (2, 8, 2)");
    setup(&f), f.q.shape[2] = f.o.shape[2] = 8 * 577, f.k.shape[2] = f.v.shape[2] = 2 * 577;
    expect(&f, IFA_STATUS_INVALID_HEAD_DIM, "D = 577 exceeds 576");
    setup(&f), f.q.shape[0] = f.o.shape[0] = 70000;
    expect(&f, IFA_STATUS_UNSUPPORTED_SHAPE, "B = 70000");
    setup(&f), f.k.shape[0] = 3;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "key has shape (3, 32, 32)");
    setup(&f), f.k.shape[2] = 48;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "it must be (2, 32, 32)");
    setup(&f), f.v.shape[1] = 31;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "value has shape (2, 31, 32)");
    setup(&f), f.o.shape[0] = 1;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "attention_out has shape (1, 1, 128)");
    setup(&f), f.lse.shape[1] = 2;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "softmax_lse has shape (2, 2, 1)");
    setup(&f), f.a.input_layout = "BNSD", f.q.ndim = f.k.ndim = f.v.ndim = f.o.ndim = 4;
    tensor(&f.q, IFA_DTYPE_FLOAT16, 4, 2, 8, 1, 16), f.o = f.q;
    tensor(&f.k, IFA_DTYPE_FLOAT16, 4, 2, 32, 2, 16), f.v = f.k; /* BSND key given to BNSD: S_kv read as 2 */
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "it must be (2, 2, 2, 16)");
}
END_TEST

START_TEST(dtypes) {
    fixture f;
    setup(&f), f.q.dtype = f.o.dtype = IFA_DTYPE_INT8;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "query has dtype int8");
    setup(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_INT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key has dtype int32");
    setup(&f), f.v.dtype = IFA_DTYPE_BFLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "value has dtype bfloat16; it must equal key's dtype float16");
    setup(&f), f.o.dtype = IFA_DTYPE_FLOAT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "attention_out has dtype float32");
    setup(&f), f.lse.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "softmax_lse has dtype float16");
}
END_TEST

/* A mask (B, 1, 1, S), a bias (B, N, 1, S) and a kv padding on the valid fixture. */
static void setup_mask_pse(fixture *f) {
    setup(f);
    tensor(&f->mask, IFA_DTYPE_BOOL, 4, 2, 1, 1, 32);
    tensor(&f->pse, IFA_DTYPE_FLOAT16, 4, 2, 8, 1, 32);
    f->a.atten_mask = &f->mask, f->a.pse_shift = &f->pse;
}

START_TEST(mask_bias_window_padding_rules) {
    fixture f;
    setup_mask_pse(&f);
    expect(&f, IFA_STATUS_OK, NULL);
    setup_mask_pse(&f), f.mask.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "atten_mask has dtype float16; it must be bool, int8 or uint8");
    setup_mask_pse(&f), f.mask.ndim = 5, f.mask.shape[4] = 1;
    expect(&f, IFA_STATUS_INVALID_RANK, "atten_mask has rank 5");
    setup_mask_pse(&f), f.mask.shape[2] = 3;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "atten_mask has shape (2, 1, 3, 32); its dimension 2 must be 1 or S1");
    setup_mask_pse(&f), f.mask.shape[0] = 1;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "atten_mask has batch 1, fewer than B = 2");
    setup_mask_pse(&f), f.mask.shape[3] = 31;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "atten_mask's last dimension 31 is shorter than the longest visible length 32");
    setup_mask_pse(&f), f.mask.shape[3] = 7, f.lens[0] = 7; /* covers every length: legal */
    expect(&f, IFA_STATUS_OK, NULL);
    setup_mask_pse(&f), f.pse.ndim = 3;
    expect(&f, IFA_STATUS_INVALID_RANK, "pse_shift has rank 3; it must be rank 4");
    setup_mask_pse(&f), f.pse.dtype = IFA_DTYPE_FLOAT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "pse_shift has dtype float32; it must be the query's dtype float16");
    setup_mask_pse(&f), f.pse.shape[1] = 4;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "pse_shift has shape (2, 4, 1, 32); it must be (B or 1, N, S1, S)");
    setup_mask_pse(&f), f.pse.shape[0] = 3;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "pse_shift has shape (3, 8, 1, 32)");
    setup_mask_pse(&f), f.pse.shape[3] = 20;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "pse_shift's last dimension 20 is shorter");
    setup_mask_pse(&f), f.pse.shape[0] = 1; /* broadcast over batch: legal */
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.a.softcap = -1;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "softcap = -1 must be 0 (off) or a positive finite float32");
    setup(&f), f.a.softcap = NAN;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "softcap");
    setup(&f), f.a.softcap = 1e-40;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "too small to divide by");
    setup(&f), f.a.window = 4; /* the planner counts only the rows a window leaves */
    {
        ifa_plan plan;
        planned(&f.a, &plan);
        ck_assert_int_eq(plan.problem.max_length, 4);
        ck_assert_int_eq(plan.problem.total_length, 8);
    }
    setup(&f), f.a.window = -1;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "window = -1 is negative");
    /* both sides of each bound: S_kv and 0 accepted, S_kv + 1 and -1 refused */
    setup(&f), f.pad = 33, f.a.kv_padding_size = &f.pad;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "kv_padding_size = 33 is outside [0, S_kv = 32]");
    f.pad = 32; /* every batch's rows start before 0: legal, each sees nothing */
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.pad = -1, f.a.kv_padding_size = &f.pad;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "kv_padding_size = -1");
    f.pad = 0;
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.pad = 4, f.a.kv_padding_size = &f.pad, f.a.actual_seq_lengths = NULL, f.a.actual_seq_lengths_count = 0;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "kv_padding_size needs actual_seq_lengths");
    setup(&f), f.pad = 30, f.a.kv_padding_size = &f.pad; /* batch 0's rows start before 0: legal, it sees nothing */
    expect(&f, IFA_STATUS_OK, NULL);
}
END_TEST

/* Multi-token queries: S1 up to 16, the per-token mask form, the LSE shape. */
START_TEST(multi_token_rules) {
    fixture f;
    setup(&f), f.q.shape[1] = 16, f.o.shape[1] = 16, f.lse.shape[2] = 16;
    expect(&f, IFA_STATUS_OK, NULL);
    setup_mask_pse(&f), f.q.shape[1] = 4, f.o.shape[1] = 4, f.lse.shape[2] = 4, f.mask.shape[2] = 4;
    f.pse.shape[2] = 4;
    expect(&f, IFA_STATUS_OK, NULL);
    setup_mask_pse(&f), f.q.shape[1] = 4, f.o.shape[1] = 4, f.lse.shape[2] = 4, f.pse.shape[2] = 1;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "pse_shift has shape (2, 8, 1, 32); it must be (B or 1, N, S1, S) = (2 or 1, 8, 4, S)");
    setup(&f), f.q.shape[1] = 17, f.o.shape[1] = 17, f.lse.shape[2] = 17;
    expect(&f, IFA_STATUS_UNSUPPORTED_SHAPE, "S1");
}
END_TEST

/* A paged BSH pool of 6 blocks of 8 rows; batch 0 uses blocks 0-3, batch 1 (length 7) block 4 only. */
static void setup_paged(fixture *f) {
    setup(f);
    tensor(&f->k, IFA_DTYPE_FLOAT16, 3, 6, 8, 32, 0);
    f->v = f->k;
    static const int32_t table[8] = {0, 1, 2, 3, 4, 99, -1, -7}; /* entries past a length are never read */
    memcpy(f->table, table, sizeof table);
    f->a.block_table = f->table, f->a.block_table_cols = 4, f->a.block_size = 8;
}

START_TEST(paged_rules) {
    fixture f;
    setup_paged(&f);
    expect(&f, IFA_STATUS_OK, NULL);
    setup_paged(&f), f.a.block_size = 0;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "block_size = 0 is outside [1, 512]");
    setup_paged(&f), f.a.block_size = 513;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "block_size = 513 is outside [1, 512]");
    setup_paged(&f), f.a.block_table = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "block_table is NULL but block_size = 8");
    setup_paged(&f), f.a.block_table_cols = 0;
    expect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table_cols = 0");
    setup_paged(&f), f.table[2] = 6;
    expect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table[0][2] = 6 is outside the pool's blocks [0, 6)");
    setup_paged(&f), f.table[4] = -1;
    expect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table[1][0] = -1");
    setup_paged(&f), f.a.block_table_cols = 3;
    expect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table has 3 blocks of 8 rows per sequence (24 positions), too few "
                                               "for actual_seq_lengths[0] = 32");
    setup_paged(&f), f.a.actual_seq_lengths = NULL, f.a.actual_seq_lengths_count = 0;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "paged KV (block_table) needs actual_seq_lengths");
    setup_paged(&f), f.k.shape[1] = 16, f.v = f.k;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "key has shape (6, 16, 32); a paged BSH pool with block_size = 8");
    setup_paged(&f), f.v.shape[0] = 5;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "value has shape (5, 8, 32); it must equal key's shape (6, 8, 32)");
    setup_paged(&f), f.pad = 0, f.a.kv_padding_size = &f.pad;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "kv_padding_size applies to contiguous key/value");
    /* BNSD pools are (blocks, N_kv, block_size, D); BSND takes 3-D or 4-D pools */
    setup_paged(&f), f.a.input_layout = "BNSD";
    tensor(&f.q, IFA_DTYPE_FLOAT16, 4, 2, 8, 1, 16), f.o = f.q;
    tensor(&f.k, IFA_DTYPE_FLOAT16, 4, 6, 2, 8, 16), f.v = f.k;
    expect(&f, IFA_STATUS_OK, NULL);
    f.k.shape[1] = 8, f.k.shape[2] = 2, f.v = f.k;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "must be (num_blocks, N_kv, block_size, D)");
    setup_paged(&f), f.a.input_layout = "BSND";
    tensor(&f.q, IFA_DTYPE_FLOAT16, 4, 2, 1, 8, 16), f.o = f.q;
    expect(&f, IFA_STATUS_OK, NULL);
    tensor(&f.k, IFA_DTYPE_FLOAT16, 4, 6, 8, 2, 16), f.v = f.k;
    expect(&f, IFA_STATUS_OK, NULL);
}
END_TEST

/* int8 KV with a per-channel (2, N_kv, D) float16 scale and offset. */
static void setup_antiquant(fixture *f) {
    setup(f);
    f->k.dtype = f->v.dtype = IFA_DTYPE_INT8;
    tensor(&f->aqs, IFA_DTYPE_FLOAT16, 3, 2, 2, 16, 0);
    f->aqo = f->aqs;
    f->a.antiquant_scale = &f->aqs, f->a.antiquant_offset = &f->aqo;
}

/* float8 KV (e4m3fn, e5m2): scales optional; with them, the antiquant rules; not with a shared prefix; the
 * tiling key's dtype digit (e5m2, ifa_dtype 10, takes digit 4). */
START_TEST(float8_rules) {
    static const ifa_dtype fmts[2] = {IFA_DTYPE_FLOAT8_E4M3, IFA_DTYPE_FLOAT8_E5M2};
    for (int i = 0; i < 2; ++i) {
        const ifa_dtype fp8 = fmts[i];
        fixture f;
        setup(&f), f.k.dtype = f.v.dtype = fp8;
        expect(&f, IFA_STATUS_OK, NULL);
        {
            ifa_plan plan;
            planned(&f.a, &plan);
            ck_assert_int_eq(plan.problem.kv_dtype, fp8);
            ck_assert_int_eq(plan.tiling_key / 100 % 10, i ? 4 : 9);
            ck_assert_int_eq(plan.problem.antiquant, IFA_ANTIQUANT_NONE);
        }
        setup_antiquant(&f), f.k.dtype = f.v.dtype = fp8; /* per channel */
        expect(&f, IFA_STATUS_OK, NULL);
        f.a.antiquant_scale = NULL;
        expect(&f, IFA_STATUS_NULL_ARGUMENT, "antiquant_offset is given without antiquant_scale");
        setup_antiquant(&f), f.k.dtype = f.v.dtype = fp8, f.aqs.shape[2] = 15, f.aqo = f.aqs;
        expect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_scale has shape (2, 2, 15)");
        char msg[160];
        setup(&f), f.k.dtype = fp8;
        snprintf(msg, sizeof msg, "value has dtype float16; it must equal key's dtype %s", ifa_dtype_name(fp8));
        expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, msg);
        setup(&f), f.q.dtype = f.o.dtype = fp8;
        snprintf(msg, sizeof msg, "query has dtype %s; it must be float32, float16 or bfloat16", ifa_dtype_name(fp8));
        expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, msg);
    }
    fixture f;
    setup(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_UINT8;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE,
           "key has dtype uint8; it must be float32, float16, bfloat16, float8_e4m3fn, float8_e5m2");
    setup(&f), f.k.dtype = IFA_DTYPE_FLOAT8_E4M3, f.v.dtype = IFA_DTYPE_FLOAT8_E5M2;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "value has dtype float8_e5m2; it must equal key's dtype float8_e4m3fn");
}
END_TEST

START_TEST(antiquant_rules) {
    fixture f;
    setup_antiquant(&f);
    expect(&f, IFA_STATUS_OK, NULL);
    setup_antiquant(&f), f.a.antiquant_scale = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "antiquant_scale is NULL but key has dtype int8; quantised KV needs it (or "
                                         "key_antiquant_scale and value_antiquant_scale); antiquant_offset alone is "
                                         "not enough");
    setup_antiquant(&f), f.a.antiquant_offset = NULL; /* offsets are optional */
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.a.antiquant_scale = &f.aqs;
    tensor(&f.aqs, IFA_DTYPE_FLOAT16, 1, 2, 0, 0, 0);
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale is given but key has dtype float16");
    setup_antiquant(&f), f.aqs.shape[2] = 15, f.aqo = f.aqs;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_scale has shape (2, 2, 15); antiquant_mode 0 takes (2) per tensor");
    setup_antiquant(&f), f.aqs.dtype = f.aqo.dtype = IFA_DTYPE_INT8;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale has dtype int8; per-channel and per-tensor scales are");
    setup_antiquant(&f), f.aqo.dtype = IFA_DTYPE_FLOAT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_offset has dtype float32; it must be the scale's float16");
    setup_antiquant(&f), f.aqo.shape[1] = 1;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_offset has shape (2, 1, 16); it must be the scale's shape");
    setup_antiquant(&f), f.a.antiquant_mode = 4;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "antiquant_mode = 4 is not 0 (per channel or tensor), 1 (per token)");
    setup_antiquant(&f), f.a.antiquant_mode = 3;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "antiquant_mode 3 keeps scales with the pages of a paged cache, but key is "
                                             "contiguous");
    /* mode 3 on the paged fixture's pool of 6 blocks of 8 rows: (2, num_blocks, N_kv, block_size) */
    setup_paged(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_INT8, f.a.antiquant_mode = 3;
    tensor(&f.aqs, IFA_DTYPE_FLOAT32, 4, 2, 6, 2, 8), f.aqo = f.aqs;
    f.a.antiquant_scale = &f.aqs, f.a.antiquant_offset = &f.aqo;
    expect(&f, IFA_STATUS_OK, NULL);
    f.aqs.shape[1] = f.aqo.shape[1] = 5;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_scale has shape (2, 5, 2, 8); antiquant_mode 3 takes (2, "
                                          "num_blocks, N_kv, block_size) = (2, 6, 2, 8)");
    f.aqs.shape[1] = 6, f.aqs.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale has dtype float16; per-token scales are float32");
    setup_antiquant(&f), f.a.antiquant_mode = 1; /* per token needs float32 (2, B, S_kv) */
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale has dtype float16; per-token scales are float32");
    setup_antiquant(&f), f.a.antiquant_mode = 1;
    tensor(&f.aqs, IFA_DTYPE_FLOAT32, 3, 2, 2, 31, 0), f.aqo = f.aqs;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_scale's last dimension 31 must be S_kv = 32");
    tensor(&f.aqs, IFA_DTYPE_FLOAT32, 3, 2, 2, 32, 0), f.aqo = f.aqs;
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.antiquant_mode = 2;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_mode 2 takes (2, B, N_kv, S)");
    tensor(&f.aqs, IFA_DTYPE_FLOAT32, 4, 2, 2, 2, 32), f.aqo = f.aqs;
    expect(&f, IFA_STATUS_OK, NULL);
    /* int4 packs two values per byte along D: D must be even */
    setup_antiquant(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_INT4;
    expect(&f, IFA_STATUS_OK, NULL);
    f.q.shape[2] = f.o.shape[2] = 8 * 15, f.k.shape[2] = f.v.shape[2] = 2 * 15;
    tensor(&f.aqs, IFA_DTYPE_FLOAT16, 3, 2, 2, 15, 0), f.aqo = f.aqs;
    expect(&f, IFA_STATUS_INVALID_HEAD_DIM, "int4 key/value pack two values per byte along D; D = 15 must be even");
    setup(&f), f.k.dtype = IFA_DTYPE_INT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key has dtype int32");
}
END_TEST

/* int8 KV with the separate form: the key's scales per channel (N_kv, D) in float16 with offsets, the value's
 * per token (B, S_kv) in float32 without (KIVI's pairing). */
static void setup_separate(fixture *f) {
    setup(f);
    f->k.dtype = f->v.dtype = IFA_DTYPE_INT8;
    tensor(&f->kas, IFA_DTYPE_FLOAT16, 2, 2, 16, 0, 0), f->kao = f->kas;
    tensor(&f->vas, IFA_DTYPE_FLOAT32, 2, 2, 32, 0, 0);
    f->a.key_antiquant_scale = &f->kas, f->a.key_antiquant_offset = &f->kao, f->a.value_antiquant_scale = &f->vas;
    f->a.value_antiquant_mode = 1;
}

/* The separate form's rules: one form only, both scales, each mode's shapes and dtypes in the side's own
 * names, offsets beside their scales, modes only with their tensors; and the value's form in the key. */
START_TEST(antiquant_separate_rules) {
    fixture f;
    setup_separate(&f);
    expect(&f, IFA_STATUS_OK, NULL);
    {
        ifa_plan plan;
        planned(&f.a, &plan);
        ck_assert_int_eq(plan.problem.aq_separate, 1);
        ck_assert_int_eq(plan.problem.antiquant, IFA_ANTIQUANT_PER_CHANNEL);
        ck_assert_int_eq(plan.problem.v_antiquant, IFA_ANTIQUANT_PER_TOKEN);
        ck_assert_int_eq(plan.problem.aq_offset, 1);
        ck_assert_int_eq(plan.problem.v_aq_offset, 0);
        ck_assert_int_eq(plan.problem.v_aq_dtype, IFA_DTYPE_FLOAT32);
        ck_assert_int_eq((int)(plan.tiling_key / 1000000000ull % 10), IFA_ANTIQUANT_PER_CHANNEL);
        ck_assert_int_eq((int)(plan.tiling_key / 1000000000000ull % 10), IFA_ANTIQUANT_PER_TOKEN);
    }
    /* per tensor is (1) in the separate form; per channel also (N_kv, 1, D) and (N_kv·D) */
    setup_separate(&f), tensor(&f.kas, IFA_DTYPE_BFLOAT16, 1, 1, 0, 0, 0), f.a.key_antiquant_offset = NULL;
    expect(&f, IFA_STATUS_OK, NULL);
    setup_separate(&f), tensor(&f.kas, IFA_DTYPE_FLOAT32, 3, 2, 1, 16, 0), f.kao = f.kas;
    expect(&f, IFA_STATUS_OK, NULL);
    setup_separate(&f), tensor(&f.kas, IFA_DTYPE_FLOAT32, 1, 32, 0, 0, 0), f.kao = f.kas;
    expect(&f, IFA_STATUS_OK, NULL);
    setup_separate(&f), f.a.antiquant_scale = &f.vas;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "antiquant_scale and key_antiquant_scale are two forms of the same "
                                             "scales; give antiquant_scale's (2, ...) form or the key's and the value's "
                                             "own tensors, not both");
    setup_separate(&f), f.a.key_antiquant_scale = f.a.key_antiquant_offset = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "value_antiquant_scale is given but key_antiquant_scale is NULL; the separate "
                                         "form needs both scales");
    setup_separate(&f), f.a.value_antiquant_scale = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "key_antiquant_scale is given but value_antiquant_scale is NULL");
    setup_separate(&f), f.a.key_antiquant_scale = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "key_antiquant_offset is given without key_antiquant_scale");
    setup_separate(&f), f.vao = f.vas, f.a.value_antiquant_offset = &f.vao, f.a.value_antiquant_scale = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "value_antiquant_offset is given without value_antiquant_scale");
    setup_separate(&f), f.a.antiquant_mode = 1;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "antiquant_mode = 1 is given with key_/value_antiquant_scale; their modes "
                                             "are key_antiquant_mode and value_antiquant_mode");
    setup_antiquant(&f), f.a.value_antiquant_mode = 2;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "value_antiquant_mode = 2 is given without key_antiquant_scale and "
                                             "value_antiquant_scale");
    setup_separate(&f), f.a.key_antiquant_mode = 7;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "key_antiquant_mode = 7 is not 0 (per channel or tensor)");
    setup_separate(&f), f.a.value_antiquant_mode = -1;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "value_antiquant_mode = -1 is not 0");
    setup_separate(&f), f.a.value_antiquant_mode = 3;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "value_antiquant_mode 3 keeps scales with the pages of a paged cache");
    setup_separate(&f), f.kas.shape[1] = 15, f.kao = f.kas;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "key_antiquant_scale has shape (2, 15); key_antiquant_mode 0 takes (1) per "
                                          "tensor or (N_kv, 1, D), (N_kv, D), (N_kv·D) per channel with N_kv = 2, D = 16");
    setup_separate(&f), f.vas.shape[1] = 31;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "value_antiquant_scale's last dimension 31 must be S_kv = 32");
    setup_separate(&f), f.a.value_antiquant_mode = 2;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "value_antiquant_scale has shape (2, 32); value_antiquant_mode 2 takes (B, "
                                          "N_kv, S) with B = 2, N_kv = 2");
    tensor(&f.vas, IFA_DTYPE_FLOAT32, 3, 2, 2, 32, 0);
    expect(&f, IFA_STATUS_OK, NULL);
    f.vas.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "value_antiquant_scale has dtype float16; per-token scales are float32");
    setup_separate(&f), f.kao.dtype = IFA_DTYPE_FLOAT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_antiquant_offset has dtype float32; it must be the scale's float16");
    setup_separate(&f), f.kas.dtype = f.kao.dtype = IFA_DTYPE_INT8;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_antiquant_scale has dtype int8; per-channel and per-tensor scales");
    setup_separate(&f), f.vao = f.vas, f.vao.shape[0] = 1, f.a.value_antiquant_offset = &f.vao;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "value_antiquant_offset has shape (1, 32); it must be the scale's shape");
    setup_separate(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_antiquant_scale is given but key has dtype float16");
    /* float8: both scales or neither */
    setup_separate(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_FLOAT8_E5M2;
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.key_antiquant_scale = f.a.key_antiquant_offset = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "the separate form needs both scales (a float8 cache without scales gives "
                                         "neither)");
    /* the pages' mode 3 for the key beside per-channel values on the paged fixture (6 blocks of 8 rows) */
    setup_paged(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_INT8;
    tensor(&f.kas, IFA_DTYPE_FLOAT32, 3, 6, 2, 8, 0);
    tensor(&f.vas, IFA_DTYPE_FLOAT16, 2, 2, 16, 0, 0);
    f.a.key_antiquant_scale = &f.kas, f.a.value_antiquant_scale = &f.vas, f.a.key_antiquant_mode = 3;
    expect(&f, IFA_STATUS_OK, NULL);
    f.kas.shape[0] = 5;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "key_antiquant_scale has shape (5, 2, 8); key_antiquant_mode 3 takes "
                                          "(num_blocks, N_kv, block_size) = (6, 2, 8)");
}
END_TEST

/* int8 output with a per-channel (N·D) float32 scale and offset. */
static void setup_quant_out(fixture *f) {
    setup(f);
    f->o.dtype = IFA_DTYPE_INT8;
    tensor(&f->qs2, IFA_DTYPE_FLOAT32, 1, 128, 0, 0, 0);
    f->qo2 = f->qs2;
    f->a.quant_scale2 = &f->qs2, f->a.quant_offset2 = &f->qo2;
}

START_TEST(quant_out_rules) {
    fixture f;
    setup_quant_out(&f);
    expect(&f, IFA_STATUS_OK, NULL);
    setup_quant_out(&f), tensor(&f.qs2, IFA_DTYPE_FLOAT32, 2, 8, 16, 0, 0), f.qo2 = f.qs2; /* (N, D) */
    expect(&f, IFA_STATUS_OK, NULL);
    setup_quant_out(&f), tensor(&f.qs2, IFA_DTYPE_FLOAT32, 1, 1, 0, 0, 0), f.a.quant_offset2 = NULL; /* per tensor */
    expect(&f, IFA_STATUS_OK, NULL);
    setup_quant_out(&f), f.a.quant_scale2 = NULL, f.o.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "quant_offset2 is given without quant_scale2");
    setup_quant_out(&f), f.a.quant_offset2 = NULL, f.a.quant_scale2 = NULL;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "attention_out has dtype int8; it must be the query's dtype (int8 needs quant_scale2)");
    setup_quant_out(&f), f.o.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "attention_out has dtype float16; it must be int8 with quant_scale2");
    setup_quant_out(&f), f.qs2.shape[0] = 127, f.qo2 = f.qs2;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "quant_scale2 has shape (127); it must be (1) per tensor or (N·D) = (128)");
    setup_quant_out(&f), f.qs2.dtype = f.qo2.dtype = IFA_DTYPE_INT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "quant_scale2 has dtype int32");
    setup_quant_out(&f), f.qo2.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "quant_offset2 has dtype float16; it must be the scale's float32");
    setup_quant_out(&f), tensor(&f.qo2, IFA_DTYPE_FLOAT32, 2, 8, 16, 0, 0);
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "quant_offset2 has shape (8, 16); it must be the scale's shape");
}
END_TEST

/* value_head_dim: D_v in [0, D], the output's head dimension; the key may be passed as the value. */
START_TEST(value_head_dim_rules) {
    fixture f;
    setup(&f), f.a.value_head_dim = 8, f.o.shape[2] = 64; /* (B, S1, N·D_v) */
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.value = &f.k; /* MLA: the key tensor as the value */
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.a.value_head_dim = 16; /* D_v = D, as 0 */
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.a.value_head_dim = 17, f.o.shape[2] = 8 * 17;
    expect(&f, IFA_STATUS_INVALID_HEAD_DIM, "value_head_dim = 17 is outside [0, D = 16] (0 means D");
    setup(&f), f.a.value_head_dim = -1;
    expect(&f, IFA_STATUS_INVALID_HEAD_DIM, "value_head_dim = -1 is outside [0, D = 16]");
    setup(&f), f.a.value_head_dim = 8; /* the output keeps N·D */
    expect(&f, IFA_STATUS_SHAPE_MISMATCH,
           "attention_out has shape (2, 1, 128); it must be query's shape with D_v = value_head_dim: (2, 1, 64)");
    setup_quant_out(&f), f.a.value_head_dim = 8, f.o.shape[2] = 64; /* per channel over N·D_v, not N·D */
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "quant_scale2 has shape (128); it must be (1) per tensor or (N·D) = (64) or "
                                          "(N, D) = (8, 8) per channel");
    f.qs2.shape[0] = f.qo2.shape[0] = 64;
    expect(&f, IFA_STATUS_OK, NULL);
    /* DeepSeek's MLA decode: BNSD, D = 576 (the limit), D_v = 512, N_kv = 1, value = key */
    setup(&f), f.a.input_layout = "BNSD", f.a.num_key_value_heads = 1, f.a.value_head_dim = 512, f.a.value = &f.k;
    tensor(&f.q, IFA_DTYPE_BFLOAT16, 4, 2, 8, 1, 576), tensor(&f.k, IFA_DTYPE_BFLOAT16, 4, 2, 1, 32, 576);
    tensor(&f.o, IFA_DTYPE_BFLOAT16, 4, 2, 8, 1, 512);
    expect(&f, IFA_STATUS_OK, NULL);
    f.o.shape[3] = 576;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "attention_out has shape (2, 8, 1, 576); it must be query's shape with D_v = "
                                          "value_head_dim: (2, 8, 1, 512)");
}
END_TEST

/* actual_seq_lengths_q: 1 or B values in [0, S1]; the default rope positions and the block table entries
 * follow each batch's tokens. */
START_TEST(query_lengths_rules) {
    fixture f;
    int64_t ql[3] = {3, 0, 1};
    setup(&f), f.q.shape[1] = f.o.shape[1] = f.lse.shape[2] = 3; /* S1 = 3 */
    f.a.actual_seq_lengths_q = ql, f.a.actual_seq_lengths_q_count = 2;
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.actual_seq_lengths_q_count = 1;
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.actual_seq_lengths_q_count = 3;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths_q has 3 values; it needs 1 or B = 2");
    f.a.actual_seq_lengths_q_count = 0;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths_q is non-NULL with actual_seq_lengths_q_count 0");
    f.a.actual_seq_lengths_q = NULL, f.a.actual_seq_lengths_q_count = 2;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "actual_seq_lengths_q is NULL but actual_seq_lengths_q_count is 2");
    f.a.actual_seq_lengths_q = ql, ql[1] = 4;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths_q[1] = 4 is outside [0, S1 = 3]");
    ql[1] = -1;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths_q[1] = -1 is outside [0, S1 = 3]");
    ql[1] = 0;
    /* planned per batch: the batch without tokens reads nothing */
    ifa_plan plan;
    planned(&f.a, &plan);
    ck_assert_int_eq(plan.problem.q_lengths, 1);
    ck_assert_int_eq(plan.problem.lengths_mode, IFA_LENGTHS_PER_BATCH);
    ck_assert_int_eq(plan.problem.total_length, 32);
    ck_assert_int_ge(plan.ws_lengths_bytes, 2 * 2 * 4);
    /* RoPE's default position is the length minus the batch's own tokens */
    f.a.rope_mode = "neox", f.lens[1] = 1, ql[1] = 2;
    expect(&f, IFA_STATUS_INVALID_POSITION,
           "batch 1's default rope position (actual_seq_lengths - actual_seq_lengths_q) = -1 is negative");
    ql[1] = 1;
    expect(&f, IFA_STATUS_OK, NULL); /* S1 for every batch would have put it at -2 */
    /* paged: a batch without query tokens reads no block, so its table entries are not looked at */
    int64_t ql1[2] = {1, 0};
    setup_paged(&f), f.lens[1] = 16; /* batch 1 would read block ids 4 and 99 */
    expect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table[1][1] = 99");
    f.a.actual_seq_lengths_q = ql1, f.a.actual_seq_lengths_q_count = 2;
    expect(&f, IFA_STATUS_OK, NULL);
}
END_TEST

/* A shared prefix (1, 40, 32) for the BSH fixture (N_kv = 2, D = 16). */
static void setup_prefix(fixture *f) {
    setup(f);
    tensor(&f->kp, IFA_DTYPE_FLOAT16, 3, 1, 40, 32, 0);
    f->vp = f->kp;
    f->prefix_len = 30;
    f->a.key_shared_prefix = &f->kp, f->a.value_shared_prefix = &f->vp, f->a.actual_shared_prefix_len = &f->prefix_len;
}

START_TEST(shared_prefix_rules) {
    fixture f;
    setup_prefix(&f);
    expect(&f, IFA_STATUS_OK, NULL);
    setup_prefix(&f), f.a.value_shared_prefix = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "value_shared_prefix is NULL but key_shared_prefix is given");
    setup(&f), f.prefix_len = 3, f.a.actual_shared_prefix_len = &f.prefix_len;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "actual_shared_prefix_len is given without key_shared_prefix");
    setup_prefix(&f), f.kp.shape[2] = 48, f.vp = f.kp; /* 3 heads of 16: a mismatched head count */
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "key_shared_prefix has shape (1, 40, 48): 3 KV heads of D = 16; it must have "
                                          "N_kv = 2 heads");
    setup_prefix(&f), f.kp.shape[0] = 2, f.vp = f.kp;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "its batch dimension must be 1");
    setup_prefix(&f), f.vp.shape[1] = 41;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "value_shared_prefix has shape (1, 41, 32); it must equal key_shared_prefix's");
    setup_prefix(&f), f.kp.ndim = 4, f.kp.shape[3] = 1, f.vp = f.kp;
    expect(&f, IFA_STATUS_INVALID_RANK, "key_shared_prefix has rank 4; layout BSH needs rank 3");
    setup_prefix(&f), f.kp.dtype = f.vp.dtype = IFA_DTYPE_FLOAT32;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "they must be the key's float16");
    setup_prefix(&f), f.prefix_len = 41;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_shared_prefix_len = 41 is outside [0, S_p = 40]");
    setup_prefix(&f), f.a.window = 8;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "window with a shared prefix is not supported");
    setup_prefix(&f), tensor(&f.mask, IFA_DTYPE_BOOL, 2, 2, 32, 0, 0), f.a.atten_mask = &f.mask;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "atten_mask with a shared prefix is not supported");
    setup_prefix(&f), f.k.dtype = f.v.dtype = f.kp.dtype = f.vp.dtype = IFA_DTYPE_INT8;
    tensor(&f.aqs, IFA_DTYPE_FLOAT16, 1, 2, 0, 0, 0), f.a.antiquant_scale = &f.aqs;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "a shared prefix with quantised (int8/int4/float8) KV is not supported");
    setup_prefix(&f), f.k.dtype = f.v.dtype = f.kp.dtype = f.vp.dtype = IFA_DTYPE_FLOAT8_E4M3;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "a shared prefix with quantised (int8/int4/float8) KV is not supported");
    setup_prefix(&f), f.k.dtype = f.v.dtype = f.kp.dtype = f.vp.dtype = IFA_DTYPE_FLOAT8_E5M2;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "a shared prefix with quantised (int8/int4/float8) KV is not supported");
}
END_TEST

START_TEST(attributes_and_lengths) {
    fixture f;
    setup(&f), f.a.scale_value = NAN;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "scale_value");
    setup(&f), f.a.scale_value = INFINITY;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "scale_value");
    setup(&f), f.a.scale_value = 1e39;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "not a finite float32");
    setup(&f), f.a.actual_seq_lengths_count = 3;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "has 3 values; it needs 1 or B = 2");
    setup(&f), f.lens[1] = -1;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths[1] = -1");
    setup(&f), f.lens[0] = 33;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths[0] = 33 is outside [0, S_kv = 32]");
    setup(&f), f.a.actual_seq_lengths_count = 0;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "non-NULL with actual_seq_lengths_count 0");
    setup(&f), f.a.actual_seq_lengths_count = -2;
    expect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "has -2 values");
}
END_TEST

/* A real fp32 BSH case with buffers, for the run-time rules. */
typedef struct live {
    fixture f;
    cl_mem q, k, v, o, lse, ws;
    ifa_plan plan;
    size_t ws_bytes;
} live;

static cl_mem buf(size_t bytes) {
    cl_int err;
    cl_mem m = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, bytes, NULL, &err);
    ck_assert_ptr_nonnull(m);
    return m;
}

static void live_setup(live *l) {
    setup(&l->f);
    l->f.q.dtype = l->f.k.dtype = l->f.v.dtype = l->f.o.dtype = IFA_DTYPE_FLOAT32;
    l->f.q.buffer = l->q = buf(2 * 128 * 4);
    l->f.k.buffer = l->k = buf(2 * 32 * 32 * 4);
    l->f.v.buffer = l->v = buf(2 * 32 * 32 * 4);
    l->f.o.buffer = l->o = buf(2 * 128 * 4);
    l->f.lse.buffer = l->lse = buf(2 * 8 * 4);
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &l->f.a, &l->plan, &l->ws_bytes),
                     IFA_STATUS_OK);
    l->ws = buf(l->ws_bytes);
}

static void live_free(live *l) {
    cl_mem all[] = {l->q, l->k, l->v, l->o, l->lse, l->ws};
    for (int i = 0; i < 6; ++i) clReleaseMemObject(all[i]);
}

static void expect_run(live *l, const ifa_plan *plan, cl_mem ws, cl_command_queue q, ifa_status want, const char *needle) {
    ifa_status st = ifa_incre_flash_attention_run(test_ctx(), plan, &l->f.a, ws, 0, q, 0, NULL, NULL);
    ck_assert_msg(st == want, "got %s (%s), want %s", ifa_status_name(st), ifa_last_error(), ifa_status_name(want));
    if (want == IFA_STATUS_OK) return;
    if (needle) ck_assert_msg(strstr(ifa_last_error(), needle), "message \"%s\" lacks \"%s\"", ifa_last_error(), needle);
}

/* template_mode names the template or leaves the choice to the planner. */
START_TEST(template_mode_rules) {
    fixture f;
    static const char *const ok[] = {"auto", "all_vector", "cv"};
    for (int i = 0; i < 3; ++i) {
        setup(&f), f.a.template_mode = ok[i];
        expect(&f, IFA_STATUS_OK, NULL);
    }
    setup(&f), f.a.template_mode = "cube";
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "template_mode \"cube\" is not \"auto\", \"all_vector\" or \"cv\"");
}
END_TEST

/* RoPE on the fixture (D = 16, lengths 32 and 7, S1 = 1): each rule has its own status and message. */
START_TEST(rope_rules) {
    fixture f;
    setup(&f), f.a.rope_mode = "neox";
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.rope_mode = "gptj", f.a.rope_dim = 8, f.a.rope_theta = 500000;
    expect(&f, IFA_STATUS_OK, NULL);
    setup(&f), f.a.rope_mode = "yarn";
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_mode \"yarn\" is not \"none\", \"neox\" or \"gptj\"");
    setup(&f), f.a.rope_dim = 8; /* with rope_mode none */
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim is given but rope_mode is none");
    setup(&f), f.a.rope_mode = "neox", f.a.rope_dim = 7;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = 7 must be even and positive");
    f.a.rope_dim = 18;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = 18 exceeds the head dimension D = 16");
    f.a.rope_dim = 0, f.a.rope_theta = -1;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_theta = -1 must be positive and finite");
    /* the rotated part away from the front (D = 16): [rope_offset, rope_offset + rope_dim) inside D */
    setup(&f), f.a.rope_mode = "neox", f.a.rope_offset = 8;
    expect(&f, IFA_STATUS_OK, NULL); /* rope_dim 0: the trailing 8 */
    f.a.rope_dim = 6;
    expect(&f, IFA_STATUS_OK, NULL);
    f.a.rope_dim = 10;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_offset + rope_dim = 8 + 10 exceeds the head dimension D = 16");
    f.a.rope_dim = 0, f.a.rope_offset = 7;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = 0 rotates D - rope_offset = 9 dims, which is odd");
    f.a.rope_offset = 16;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_offset = 16 is outside [0, D = 16)");
    f.a.rope_offset = -2;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_offset = -2 is outside [0, D = 16)");
    setup(&f), f.a.rope_offset = 4; /* with rope_mode none */
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_offset is given but rope_mode is none");
    /* positions */
    setup(&f), f.a.rope_mode = "neox", f.rope_pos[0] = 5, f.rope_pos[1] = -3;
    f.a.rope_positions = f.rope_pos, f.a.rope_positions_count = 2;
    expect(&f, IFA_STATUS_INVALID_POSITION, "rope_positions[1] = -3 is negative");
    f.rope_pos[1] = (1 << 24) - 1;
    expect(&f, IFA_STATUS_OK, NULL);
    f.rope_pos[1] = 1 << 24;
    expect(&f, IFA_STATUS_INVALID_POSITION, "rope_positions[1] = 16777216 puts the last of 1 tokens at or past 2^24");
    f.a.rope_positions_count = 1;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_positions has 1 values; it needs B = 2");
    setup(&f), f.a.rope_mode = "neox", f.lens[1] = 0; /* default position: length - S1 = -1 */
    expect(&f, IFA_STATUS_INVALID_POSITION, "batch 1's default rope position (actual_seq_lengths - S1) = -1 is "
                                            "negative; rope_positions gives positions explicitly");
    /* tables: (positions, rope_dim / 2) float32, covering every position */
    setup(&f), f.a.rope_mode = "gptj";
    tensor(&f.rc, IFA_DTYPE_FLOAT32, 2, 32, 8, 0, 0), f.rs = f.rc;
    f.a.rope_cos = &f.rc, f.a.rope_sin = &f.rs;
    expect(&f, IFA_STATUS_OK, NULL); /* positions 31 and 6 */
    f.rc.shape[0] = f.rs.shape[0] = 31;
    expect(&f, IFA_STATUS_INVALID_POSITION, "batch 0's default rope position (actual_seq_lengths - S1) = 31 needs "
                                            "rope_cos/rope_sin rows up to 31; the tables have 31");
    f.rc.shape[0] = f.rs.shape[0] = 32, f.rc.shape[1] = 4;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "rope_cos has shape (32, 4); it must be (positions, rope_dim / 2 = 8)");
    f.rc.shape[1] = 8, f.rs.shape[0] = 33;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "rope_sin has shape (33, 8); it must be rope_cos's (32, 8)");
    f.rs.shape[0] = 32, f.rs.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "rope_sin has dtype float16; the tables are float32");
    f.rs.dtype = IFA_DTYPE_FLOAT32, f.a.rope_sin = NULL;
    expect(&f, IFA_STATUS_NULL_ARGUMENT, "rope_cos is given without rope_sin");
    f.a.rope_sin = &f.rs, f.a.rope_theta = 10000;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_theta = 10000 is given with rope_cos/rope_sin tables");
}
END_TEST

/* sinks: float32 (N). */
START_TEST(sinks_rules) {
    fixture f;
    setup(&f);
    tensor(&f.sinks, IFA_DTYPE_FLOAT32, 1, 8, 0, 0, 0);
    f.a.sinks = &f.sinks;
    expect(&f, IFA_STATUS_OK, NULL);
    {
        ifa_plan plan;
        planned(&f.a, &plan);
        ck_assert_int_eq(plan.problem.has_sinks, 1);
    }
    f.sinks.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "sinks has dtype float16; it must be float32");
    f.sinks.dtype = IFA_DTYPE_FLOAT32, f.sinks.shape[0] = 2;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "sinks has shape (2); it must be (N) = (8), one logit per query head");
    tensor(&f.sinks, IFA_DTYPE_FLOAT32, 2, 1, 8, 0, 0);
    expect(&f, IFA_STATUS_INVALID_RANK, "sinks has shape (1, 8); it must be (N) = (8)");
    tensor(&f.sinks, IFA_DTYPE_FLOAT32, 1, 0, 0, 0, 0);
    expect(&f, IFA_STATUS_INVALID_TENSOR, "sinks");
}
END_TEST

/* alibi_slopes: float32, (N) or (B, N); not with a shared prefix. */
START_TEST(alibi_rules) {
    fixture f;
    setup(&f);
    tensor(&f.alibi, IFA_DTYPE_FLOAT32, 1, 8, 0, 0, 0);
    f.a.alibi_slopes = &f.alibi;
    ifa_plan plan;
    planned(&f.a, &plan);
    ck_assert_int_eq(plan.problem.alibi, IFA_ALIBI_PER_HEAD);
    tensor(&f.alibi, IFA_DTYPE_FLOAT32, 2, 2, 8, 0, 0);
    planned(&f.a, &plan);
    ck_assert_int_eq(plan.problem.alibi, IFA_ALIBI_PER_BATCH);
    f.alibi.dtype = IFA_DTYPE_FLOAT16;
    expect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "alibi_slopes has dtype float16; it must be float32");
    f.alibi.dtype = IFA_DTYPE_FLOAT32, f.alibi.shape[0] = 3;
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "alibi_slopes has shape (3, 8); it must be (N) = (8) or (B, N) = (2, 8), "
                                          "one slope per query head");
    tensor(&f.alibi, IFA_DTYPE_FLOAT32, 1, 4, 0, 0, 0);
    expect(&f, IFA_STATUS_SHAPE_MISMATCH, "alibi_slopes has shape (4); it must be (N) = (8)");
    tensor(&f.alibi, IFA_DTYPE_FLOAT32, 3, 2, 8, 1, 0);
    expect(&f, IFA_STATUS_INVALID_RANK, "alibi_slopes has rank 3; it must be (N) or (B, N)");
    tensor(&f.alibi, IFA_DTYPE_FLOAT32, 1, 0, 0, 0, 0);
    expect(&f, IFA_STATUS_INVALID_TENSOR, "alibi_slopes");
    setup_prefix(&f), tensor(&f.alibi, IFA_DTYPE_FLOAT32, 1, 8, 0, 0, 0), f.a.alibi_slopes = &f.alibi;
    expect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "alibi_slopes with a shared prefix is not supported");
}
END_TEST

/* Optional input t, put in args' slot with buffer small: a plan made without it refuses the call (the
 * message names the problem field: mismatch); with a plan made for it, the small buffer (too_small) and a NULL
 * buffer (null_buffer) are refused. The slot is cleared after. */
static void optional_input_run_rules(live *l, cl_command_queue q, ifa_tensor *t, const ifa_tensor **slot, cl_mem small,
                                     const char *mismatch, const char *too_small, const char *null_buffer) {
    t->buffer = small;
    *slot = t;
    expect_run(l, &l->plan, l->ws, q, IFA_STATUS_PLAN_MISMATCH, mismatch);
    ifa_plan with;
    size_t ws_bytes;
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &l->f.a, &with, &ws_bytes), IFA_STATUS_OK);
    expect_run(l, &with, l->ws, q, IFA_STATUS_BUFFER_TOO_SMALL, too_small);
    t->buffer = NULL;
    expect_run(l, &with, l->ws, q, IFA_STATUS_NULL_ARGUMENT, null_buffer);
    *slot = NULL;
}

START_TEST(run_rules) {
    live l;
    live_setup(&l);
    cl_command_queue q = test_queue();
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_OK, NULL);
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    ck_assert_int_eq(ifa_incre_flash_attention_run(NULL, &l.plan, &l.f.a, l.ws, 0, q, 0, NULL, NULL),
                     IFA_STATUS_NULL_ARGUMENT);
    expect_run(&l, NULL, l.ws, q, IFA_STATUS_NULL_ARGUMENT, "plan");
    expect_run(&l, &l.plan, l.ws, NULL, IFA_STATUS_INVALID_QUEUE, "queue is NULL");
    expect_run(&l, &l.plan, NULL, q, IFA_STATUS_WORKSPACE_TOO_SMALL, "workspace is NULL");
    cl_mem tiny = buf(4);
    expect_run(&l, &l.plan, tiny, q, IFA_STATUS_WORKSPACE_TOO_SMALL, "workspace holds 4 bytes");
    clReleaseMemObject(tiny);
    ck_assert_int_eq(ifa_incre_flash_attention_run(test_ctx(), &l.plan, &l.f.a, l.ws, 2, q, 0, NULL, NULL),
                     IFA_STATUS_WORKSPACE_TOO_SMALL);
    ck_assert_int_eq(ifa_incre_flash_attention_run(test_ctx(), &l.plan, &l.f.a, l.ws, 0, q, 2, NULL, NULL),
                     IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "event_wait_list is NULL with num_events_in_wait_list = 2"));

    ifa_plan bad = l.plan;
    bad.magic = 0;
    expect_run(&l, &bad, l.ws, q, IFA_STATUS_INVALID_PLAN, "magic");
    bad = l.plan, bad.version = 999;
    expect_run(&l, &bad, l.ws, q, IFA_STATUS_INVALID_PLAN, "version 999");
    bad = l.plan, bad.tiling_key += 1;
    expect_run(&l, &bad, l.ws, q, IFA_STATUS_INVALID_PLAN, "tiling_key");
    bad = l.plan, bad.heads_per_group = 0;
    expect_run(&l, &bad, l.ws, q, IFA_STATUS_INVALID_PLAN, "inconsistent");

    l.f.lens[1] = 8; /* same count, other value */
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_PLAN_MISMATCH, "total_length");
    l.f.lens[0] = 32, l.f.lens[1] = 7;
    l.f.a.scale_value = 0.5;
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_PLAN_MISMATCH, "scale_bits");
    l.f.a.scale_value = 0.25;
    l.f.lens[0] = 7, l.f.lens[1] = 32; /* same max and total, other order */
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_PLAN_MISMATCH, "actual_seq_lengths");
    l.f.lens[0] = 32, l.f.lens[1] = 7;
    l.f.a.value_head_dim = 8, l.f.o.shape[2] = 64; /* a valid call with D_v = 8, the plan's is 16 */
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_PLAN_MISMATCH, "value_dim");
    l.f.a.value_head_dim = 0, l.f.o.shape[2] = 128;
    int64_t ql[2] = {1, 1};
    l.f.a.actual_seq_lengths_q = ql, l.f.a.actual_seq_lengths_q_count = 2; /* every batch its S1 = 1 token */
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_PLAN_MISMATCH, "q_lengths = 0 but args give 1");
    l.f.lens[0] = 0; /* batch 0 sees nothing with or without its token: only the tokens differ */
    ifa_plan qplan;
    size_t qws = 0;
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &l.f.a, &qplan, &qws), IFA_STATUS_OK);
    ql[0] = 0;
    expect_run(&l, &qplan, l.ws, q, IFA_STATUS_PLAN_MISMATCH, "actual_seq_lengths_q");
    l.f.a.actual_seq_lengths_q = NULL, l.f.a.actual_seq_lengths_q_count = 0, l.f.lens[0] = 32;

    l.f.q.buffer = NULL;
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_NULL_ARGUMENT, "query.buffer is NULL");
    l.f.q.buffer = l.q;
    l.f.o.offset = 4;
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_BUFFER_TOO_SMALL, "attention_out needs 1024 bytes from offset 4");
    l.f.o.offset = 0;
    /* an output may not share bytes with an input, the other output or the workspace (the run would read what it
     * wrote); apart in one buffer it may */
    l.f.lse.buffer = l.q;
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_INVALID_ATTRIBUTE,
               "softmax_lse (bytes [0, 64) of its buffer) overlaps query (bytes [0, 1024)) in the same buffer");
    l.f.lse.buffer = l.o, l.f.lse.offset = 1020;
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_BUFFER_TOO_SMALL, "softmax_lse needs 64 bytes from offset 1020");
    {
        cl_mem big = buf(2048);
        l.f.o.buffer = l.f.lse.buffer = big, l.f.lse.offset = 1020;
        expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_INVALID_ATTRIBUTE, "attention_out (bytes [0, 1024) of its buffer) "
                                                                        "overlaps softmax_lse (bytes [1020, 1084))");
        l.f.lse.offset = 1024; /* right after the output: apart */
        expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_OK, NULL);
        ck_assert_int_eq(clFinish(q), CL_SUCCESS);
        ck_assert_int_gt((int)l.ws_bytes, 0); /* per-batch lengths go through the workspace */
        cl_mem shared = buf(l.ws_bytes + 2048);
        l.f.o.buffer = shared, l.f.lse.buffer = l.lse, l.f.lse.offset = 0;
        expect_run(&l, &l.plan, shared, q, IFA_STATUS_INVALID_ATTRIBUTE, "overlaps the workspace");
        l.f.o.offset = (l.ws_bytes + 63) / 64 * 64; /* past the workspace's bytes: apart */
        expect_run(&l, &l.plan, shared, q, IFA_STATUS_OK, NULL);
        ck_assert_int_eq(clFinish(q), CL_SUCCESS);
        l.f.o.buffer = l.o, l.f.o.offset = 0;
        clReleaseMemObject(shared);
        clReleaseMemObject(big);
    }
    l.f.lse.buffer = l.lse, l.f.lse.offset = 0;
    /* a buffer of another cl_context (the same device) */
    {
        cl_int err;
        cl_device_id dev = ifa_context_device(test_ctx());
        cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        ck_assert_ptr_nonnull(other);
        cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 2 * 32 * 32 * 4, NULL, &err);
        ck_assert_ptr_nonnull(foreign);
        l.f.v.buffer = foreign;
        expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_INVALID_ATTRIBUTE,
                   "value.buffer belongs to another cl_context than the ifa context's");
        l.f.v.buffer = l.v;
        clReleaseMemObject(foreign);
        clReleaseContext(other);
    }
    cl_mem small = buf(8);
    l.f.k.buffer = small;
    expect_run(&l, &l.plan, l.ws, q, IFA_STATUS_BUFFER_TOO_SMALL, "key needs 8192 bytes");
    l.f.k.buffer = l.k;
    /* sinks (N floats) and alibi_slopes (B x N floats) */
    tensor(&l.f.sinks, IFA_DTYPE_FLOAT32, 1, 8, 0, 0, 0);
    optional_input_run_rules(&l, q, &l.f.sinks, &l.f.a.sinks, small, "has_sinks", "sinks needs 32 bytes",
                             "sinks.buffer is NULL");
    tensor(&l.f.alibi, IFA_DTYPE_FLOAT32, 2, 2, 8, 0, 0);
    optional_input_run_rules(&l, q, &l.f.alibi, &l.f.a.alibi_slopes, small,
                             "the plan was made for alibi = 0 but args give 2", "alibi_slopes needs 64 bytes",
                             "alibi_slopes.buffer is NULL");
    clReleaseMemObject(small);
    ck_assert_int_eq(clFinish(q), CL_SUCCESS);
    live_free(&l);
}
END_TEST

/* The output sits inside a larger buffer at an offset: the bytes around it keep their pattern. */
START_TEST(no_write_outside_output) {
    live l;
    live_setup(&l);
    const size_t out_bytes = 2 * 128 * 4, guard = 256;
    cl_mem big = buf(out_bytes + 2 * guard);
    unsigned char *pattern = malloc(out_bytes + 2 * guard), *back = malloc(out_bytes + 2 * guard);
    for (size_t i = 0; i < out_bytes + 2 * guard; ++i) pattern[i] = (unsigned char)(i * 7 + 3);
    cl_command_queue q = test_queue();
    ck_assert_int_eq(clEnqueueWriteBuffer(q, big, CL_TRUE, 0, out_bytes + 2 * guard, pattern, 0, NULL, NULL), CL_SUCCESS);
    float zeros[128 * 32 * 2] = {0};
    ck_assert_int_eq(clEnqueueWriteBuffer(q, l.q, CL_TRUE, 0, 2 * 128 * 4, zeros, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueWriteBuffer(q, l.k, CL_TRUE, 0, 2 * 32 * 32 * 4, zeros, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueWriteBuffer(q, l.v, CL_TRUE, 0, 2 * 32 * 32 * 4, zeros, 0, NULL, NULL), CL_SUCCESS);
    l.f.o.buffer = big;
    l.f.o.offset = guard;
    l.f.a.softmax_lse = NULL;
    ifa_plan plan;
    planned(&l.f.a, &plan);
    expect_run(&l, &plan, l.ws, q, IFA_STATUS_OK, NULL);
    ck_assert_int_eq(clEnqueueReadBuffer(q, big, CL_TRUE, 0, out_bytes + 2 * guard, back, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(memcmp(back, pattern, guard), 0);
    ck_assert_int_eq(memcmp(back + guard + out_bytes, pattern + guard + out_bytes, guard), 0);
    ck_assert_int_ne(memcmp(back + guard, pattern + guard, out_bytes), 0); /* the output itself was written */
    free(pattern);
    free(back);
    clReleaseMemObject(big);
    live_free(&l);
}
END_TEST

START_TEST(status_table) {
    for (int s = 0; s < IFA_STATUS_COUNT_; ++s) {
        ck_assert_str_ne(ifa_status_name((ifa_status)s), "UNKNOWN_STATUS");
        ck_assert_ptr_nonnull(ifa_status_message((ifa_status)s));
    }
    ck_assert_str_eq(ifa_status_name((ifa_status)-1), "UNKNOWN_STATUS");
    ck_assert_str_eq(ifa_status_name(IFA_STATUS_COUNT_), "UNKNOWN_STATUS");
    ifa_dtype d;
    ck_assert_int_eq(ifa_dtype_from_name("bf16", &d), 0);
    ck_assert_int_eq(d, IFA_DTYPE_BFLOAT16);
    ck_assert_int_eq(ifa_dtype_from_name("float64", &d), -1);
    ifa_context *c = (ifa_context *)1;
    ck_assert_int_eq(ifa_context_create_default("no such device anywhere", &c), IFA_STATUS_NO_DEVICE);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(ifa_context_create(NULL, NULL, &c), IFA_STATUS_NULL_ARGUMENT);
}
END_TEST

int main(void) {
    Suite *s = suite_create("validation");
    TCase *t = test_tcase_create("rules");
    tcase_add_test(t, valid_fixture_plans);
    tcase_add_test(t, null_arguments);
    tcase_add_test(t, prepare_validates_as_planning);
    tcase_add_test(t, malformed_descriptors);
    tcase_add_test(t, layout_and_rank);
    tcase_add_test(t, heads);
    tcase_add_test(t, shapes);
    tcase_add_test(t, dtypes);
    tcase_add_test(t, attributes_and_lengths);
    tcase_add_test(t, mask_bias_window_padding_rules);
    tcase_add_test(t, multi_token_rules);
    tcase_add_test(t, paged_rules);
    tcase_add_test(t, antiquant_rules);
    tcase_add_test(t, antiquant_separate_rules);
    tcase_add_test(t, float8_rules);
    tcase_add_test(t, quant_out_rules);
    tcase_add_test(t, value_head_dim_rules);
    tcase_add_test(t, query_lengths_rules);
    tcase_add_test(t, shared_prefix_rules);
    tcase_add_test(t, rope_rules);
    tcase_add_test(t, template_mode_rules);
    tcase_add_test(t, sinks_rules);
    tcase_add_test(t, alibi_rules);
    tcase_add_test(t, run_rules);
    tcase_add_test(t, no_write_outside_output);
    tcase_add_test(t, status_table);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
