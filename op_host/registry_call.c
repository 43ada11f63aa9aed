/* The generic call: named tensors and attributes bound to each op's typed arguments, infer-shape, and the
 * two phases through the typed API. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ifa/registry.h"
#include "core/status.h"

/* def's index in the registry, -1 for a definition that is not the registry's own. */
static int op_index(const ifa_op_def *def) {
    for (int32_t i = 0; i < ifa_op_count(); ++i)
        if (ifa_op_at(i) == def) return i;
    return -1;
}

/* A call's names checked against the definition: every name known, attributes of their declared type,
 * nothing named twice, required inputs and attributes present. */
static ifa_status check_names(const ifa_op_def *def, const ifa_op_call *call) {
    if (!def) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "def is NULL");
    if (op_index(def) < 0)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "def is not one of the registry's (take it from ifa_op_find)");
    if (!call) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "call is NULL");
    if ((call->num_tensors > 0 && !call->tensors) || (call->num_attrs > 0 && !call->attrs) || call->num_tensors < 0 ||
        call->num_attrs < 0)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "call lists %d tensors and %d attributes without their arrays",
                         (int)call->num_tensors, (int)call->num_attrs);
    for (int32_t i = 0; i < call->num_tensors; ++i) {
        const char *n = call->tensors[i].name;
        int32_t known = 0;
        for (int32_t j = 0; n && j < def->num_inputs; ++j) known |= strcmp(def->inputs[j].name, n) == 0;
        for (int32_t j = 0; n && j < def->num_outputs; ++j) known |= strcmp(def->outputs[j].name, n) == 0;
        if (!known)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "%s has no input or output named \"%s\"", def->name,
                             n ? n : "(null)");
        for (int32_t j = 0; j < i; ++j)
            if (strcmp(call->tensors[j].name, n) == 0)
                return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "tensor \"%s\" is named twice", n);
    }
    for (int32_t i = 0; i < call->num_attrs; ++i) {
        const ifa_named_attr *a = &call->attrs[i];
        const ifa_attr_def *d = NULL;
        for (int32_t j = 0; a->name && j < def->num_attrs; ++j)
            if (strcmp(def->attrs[j].name, a->name) == 0) d = &def->attrs[j];
        if (!d)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "%s has no attribute named \"%s\"", def->name,
                             a->name ? a->name : "(null)");
        if (a->type != d->type)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "attribute %s is given as type %d; %s takes type %d (%s)",
                             a->name, (int)a->type, def->name, (int)d->type,
                             d->type == IFA_ATTR_INT ? "int" : d->type == IFA_ATTR_FLOAT ? "float"
                             : d->type == IFA_ATTR_STRING ? "string" : d->type == IFA_ATTR_BOOL ? "bool" : "int_list");
        if ((a->type == IFA_ATTR_STRING && !a->s) || (a->type == IFA_ATTR_INT_LIST && a->list_len > 0 && !a->list) ||
            (a->type == IFA_ATTR_INT_LIST && a->list_len < 0))
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "attribute %s has no value", a->name);
        for (int32_t j = 0; j < i; ++j)
            if (strcmp(call->attrs[j].name, a->name) == 0)
                return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "attribute %s is given twice", a->name);
    }
    return IFA_STATUS_OK;
}

static const ifa_tensor *tensor(const ifa_op_call *call, const char *name) {
    for (int32_t i = 0; i < call->num_tensors; ++i)
        if (strcmp(call->tensors[i].name, name) == 0) return &call->tensors[i].tensor;
    return NULL;
}

static const ifa_named_attr *attr(const ifa_op_call *call, const char *name) {
    for (int32_t i = 0; i < call->num_attrs; ++i)
        if (strcmp(call->attrs[i].name, name) == 0) return &call->attrs[i];
    return NULL;
}

static int64_t attr_int(const ifa_op_call *call, const char *name, int64_t dflt) {
    const ifa_named_attr *a = attr(call, name);
    return a ? a->i : dflt;
}

static double attr_float(const ifa_op_call *call, const char *name, double dflt) {
    const ifa_named_attr *a = attr(call, name);
    return a ? a->f : dflt;
}

static const char *attr_string(const ifa_op_call *call, const char *name, const char *dflt) {
    const ifa_named_attr *a = attr(call, name);
    return a ? a->s : dflt;
}

/* Everything a bound call owns besides the call itself: the typed args and an int32 copy of block_table. */
typedef struct bound {
    int op; /* index in the registry */
    ifa_incre_flash_attention_args ifa;
    ifa_merge_attention_states_args merge;
    ifa_kv_cache_append_args append;
    int32_t *table;
    int64_t kv_padding, prefix_len;
} bound;

/* block_table (int64 list) as the int32 array the typed APIs take. */
static ifa_status bind_table(const ifa_op_call *call, bound *b, const int32_t **table, int64_t *cols) {
    const ifa_named_attr *t = attr(call, "block_table");
    *cols = attr_int(call, "block_table_cols", 0);
    *table = NULL;
    if (!t) return IFA_STATUS_OK;
    if (t->list_len < 1 || *cols < 1 || t->list_len % *cols != 0)
        return ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE, "block_table has %" PRId64 " ids; it must be B rows of "
                         "block_table_cols = %" PRId64 " ids", t->list_len, *cols);
    if (!(b->table = malloc((size_t)t->list_len * sizeof *b->table)))
        return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "copying a %" PRId64 "-entry block table", t->list_len);
    for (int64_t i = 0; i < t->list_len; ++i)
        b->table[i] = t->list[i] < INT32_MIN || t->list[i] > INT32_MAX ? -1 : (int32_t)t->list[i];
    *table = b->table;
    return IFA_STATUS_OK;
}

static ifa_status bind(const ifa_op_def *def, const ifa_op_call *call, bound *b) {
    memset(b, 0, sizeof *b);
    IFA__TRY(check_names(def, call));
    b->op = op_index(def);
    const ifa_named_attr *a;
    if (b->op == 0) {
        ifa_incre_flash_attention_args *x = &b->ifa;
        ifa_incre_flash_attention_args_init(x);
        x->query = tensor(call, "query"), x->key = tensor(call, "key"), x->value = tensor(call, "value");
        x->attention_out = tensor(call, "attention_out"), x->softmax_lse = tensor(call, "softmax_lse");
        x->atten_mask = tensor(call, "atten_mask"), x->pse_shift = tensor(call, "pse_shift");
        x->sinks = tensor(call, "sinks"), x->alibi_slopes = tensor(call, "alibi_slopes");
        x->antiquant_scale = tensor(call, "antiquant_scale"), x->antiquant_offset = tensor(call, "antiquant_offset");
        x->key_antiquant_scale = tensor(call, "key_antiquant_scale");
        x->key_antiquant_offset = tensor(call, "key_antiquant_offset");
        x->value_antiquant_scale = tensor(call, "value_antiquant_scale");
        x->value_antiquant_offset = tensor(call, "value_antiquant_offset");
        x->quant_scale2 = tensor(call, "quant_scale2"), x->quant_offset2 = tensor(call, "quant_offset2");
        x->key_shared_prefix = tensor(call, "key_shared_prefix");
        x->value_shared_prefix = tensor(call, "value_shared_prefix");
        x->rope_cos = tensor(call, "rope_cos"), x->rope_sin = tensor(call, "rope_sin");
        if (!attr(call, "num_heads"))
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "IncreFlashAttention needs the attribute num_heads");
        x->num_heads = attr_int(call, "num_heads", 0);
        x->scale_value = attr_float(call, "scale_value", 1.0);
        x->input_layout = attr_string(call, "input_layout", "BSH");
        x->num_key_value_heads = attr_int(call, "num_key_value_heads", 0);
        if (attr_int(call, "softmax_lse_flag", 0) != !!x->softmax_lse)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, x->softmax_lse ? "a softmax_lse tensor is given but "
                             "softmax_lse_flag is false" : "softmax_lse_flag is true but no softmax_lse tensor is given");
        if ((a = attr(call, "actual_seq_lengths"))) x->actual_seq_lengths = a->list, x->actual_seq_lengths_count = a->list_len;
        if ((a = attr(call, "actual_seq_lengths_q")))
            x->actual_seq_lengths_q = a->list, x->actual_seq_lengths_q_count = a->list_len;
        x->softcap = attr_float(call, "softcap", 0), x->window = attr_int(call, "window", 0);
        x->value_head_dim = attr_int(call, "value_head_dim", 0);
        if ((a = attr(call, "kv_padding_size"))) b->kv_padding = a->i, x->kv_padding_size = &b->kv_padding;
        IFA__TRY(bind_table(call, b, &x->block_table, &x->block_table_cols));
        x->block_size = attr_int(call, "block_size", 0);
        x->antiquant_mode = attr_int(call, "antiquant_mode", 0);
        x->key_antiquant_mode = attr_int(call, "key_antiquant_mode", 0);
        x->value_antiquant_mode = attr_int(call, "value_antiquant_mode", 0);
        if ((a = attr(call, "actual_shared_prefix_len"))) b->prefix_len = a->i, x->actual_shared_prefix_len = &b->prefix_len;
        x->rope_mode = attr_string(call, "rope_mode", NULL);
        x->rope_theta = attr_float(call, "rope_theta", 0), x->rope_dim = attr_int(call, "rope_dim", 0);
        x->rope_offset = attr_int(call, "rope_offset", 0);
        if ((a = attr(call, "rope_positions"))) x->rope_positions = a->list, x->rope_positions_count = a->list_len;
        x->template_mode = attr_string(call, "template_mode", NULL);
    } else if (b->op == 1) {
        ifa_merge_attention_states_args *x = &b->merge;
        x->partial_outputs = tensor(call, "partial_outputs"), x->partial_lses = tensor(call, "partial_lses");
        x->merged_output = tensor(call, "merged_output"), x->merged_lse = tensor(call, "merged_lse");
        if (attr_int(call, "merged_lse_flag", 0) != !!x->merged_lse)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, x->merged_lse ? "a merged_lse tensor is given but "
                             "merged_lse_flag is false" : "merged_lse_flag is true but no merged_lse tensor is given");
    } else {
        ifa_kv_cache_append_args *x = &b->append;
        ifa_kv_cache_append_args_init(x);
        x->key = tensor(call, "key"), x->value = tensor(call, "value");
        x->key_cache = tensor(call, "key_cache"), x->value_cache = tensor(call, "value_cache");
        x->antiquant_scale = tensor(call, "antiquant_scale"), x->antiquant_offset = tensor(call, "antiquant_offset");
        x->key_antiquant_scale = tensor(call, "key_antiquant_scale");
        x->key_antiquant_offset = tensor(call, "key_antiquant_offset");
        x->value_antiquant_scale = tensor(call, "value_antiquant_scale");
        x->value_antiquant_offset = tensor(call, "value_antiquant_offset");
        x->key_antiquant_mode = attr_int(call, "key_antiquant_mode", 0);
        x->value_antiquant_mode = attr_int(call, "value_antiquant_mode", 0);
        x->rope_cos = tensor(call, "rope_cos"), x->rope_sin = tensor(call, "rope_sin");
        if ((a = attr(call, "cache_seq_lengths"))) x->cache_seq_lengths = a->list, x->cache_seq_lengths_count = a->list_len;
        if ((a = attr(call, "new_seq_lengths"))) x->new_seq_lengths = a->list, x->new_seq_lengths_count = a->list_len;
        x->input_layout = attr_string(call, "input_layout", "BSH");
        x->num_key_value_heads = attr_int(call, "num_key_value_heads", 0);
        IFA__TRY(bind_table(call, b, &x->block_table, &x->block_table_cols));
        x->block_size = attr_int(call, "block_size", 0);
        x->rope_mode = attr_string(call, "rope_mode", NULL);
        x->rope_theta = attr_float(call, "rope_theta", 0), x->rope_dim = attr_int(call, "rope_dim", 0);
        x->rope_offset = attr_int(call, "rope_offset", 0);
        if ((a = attr(call, "rope_positions"))) x->rope_positions = a->list, x->rope_positions_count = a->list_len;
    }
    return IFA_STATUS_OK;
}

static void unbind(bound *b) { free(b->table); }

ifa_status ifa_op_infer(const ifa_op_def *def, const ifa_op_call *call, ifa_tensor *outputs) {
    IFA__TRY(check_names(def, call));
    if (def->num_outputs > 0 && !outputs) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "outputs is NULL");
    for (int32_t i = 0; i < def->num_outputs; ++i) memset(&outputs[i], 0, sizeof outputs[i]);
    const int op = op_index(def);
    if (op == 0) {
        const ifa_tensor *q = tensor(call, "query");
        if (!q) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "query is NULL: the outputs follow its shape");
        if (q->ndim < 3 || q->ndim > 4)
            return ifa__fail(IFA_STATUS_INVALID_RANK, "query has rank %d; it must be 3 or 4", (int)q->ndim);
        outputs[0] = *q;
        outputs[0].buffer = NULL, outputs[0].offset = 0;
        if (tensor(call, "quant_scale2")) outputs[0].dtype = IFA_DTYPE_INT8;
        const char *layout = attr_string(call, "input_layout", "BSH");
        const int64_t n = attr_int(call, "num_heads", 0), dv = attr_int(call, "value_head_dim", 0);
        /* D_v for D (the checks refuse a D_v outside [0, D] later, with their message) */
        if (dv > 0) outputs[0].shape[q->ndim - 1] = strcmp(layout, "BSH") == 0 ? n * dv : dv;
        if (attr_int(call, "softmax_lse_flag", 0)) {
            const int64_t s1 = strcmp(layout, "BNSD") == 0 ? q->shape[2] : q->shape[1];
            outputs[1].dtype = IFA_DTYPE_FLOAT32, outputs[1].ndim = 3;
            outputs[1].shape[0] = q->shape[0], outputs[1].shape[1] = n, outputs[1].shape[2] = s1;
        }
    } else if (op == 1) {
        const ifa_tensor *po = tensor(call, "partial_outputs"), *pl = tensor(call, "partial_lses");
        if (!po || !pl) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "partial_outputs and partial_lses are required");
        if (po->ndim < 2 || pl->ndim < 1)
            return ifa__fail(IFA_STATUS_INVALID_RANK, "partial_outputs has rank %d; it must be (P, rows..., D)",
                             (int)po->ndim);
        outputs[0].ndim = po->ndim - 1;
        memcpy(outputs[0].shape, po->shape + 1, (size_t)(po->ndim - 1) * sizeof po->shape[0]);
        outputs[0].dtype = po->dtype;
        const char *odt = attr_string(call, "out_dtype", NULL);
        if (odt && ifa_dtype_from_name(odt, &outputs[0].dtype) != 0)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "out_dtype \"%s\" is not a dtype name", odt);
        if (attr_int(call, "merged_lse_flag", 0)) {
            outputs[1].dtype = IFA_DTYPE_FLOAT32;
            outputs[1].ndim = pl->ndim > 1 ? pl->ndim - 1 : 1;
            if (pl->ndim > 1) memcpy(outputs[1].shape, pl->shape + 1, (size_t)(pl->ndim - 1) * sizeof pl->shape[0]);
            else outputs[1].shape[0] = 1;
        }
    }
    return IFA_STATUS_OK;
}

ifa_status ifa_op_get_workspace_size(ifa_context *ctx, const ifa_op_def *def, const ifa_op_call *call,
                                     ifa_plan *plan, size_t *workspace_bytes) {
    if (!plan) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "plan is NULL");
    memset(plan, 0, sizeof *plan);
    bound b;
    ifa_status st = bind(def, call, &b);
    if (st == IFA_STATUS_OK) {
        if (b.op == 0) st = ifa_incre_flash_attention_get_workspace_size(ctx, &b.ifa, plan, workspace_bytes);
        else if (b.op == 1) st = ifa_merge_attention_states_get_workspace_size(ctx, &b.merge, workspace_bytes);
        else st = ifa_kv_cache_append_get_workspace_size(ctx, &b.append, workspace_bytes);
    }
    unbind(&b);
    return st;
}

ifa_status ifa_op_prepare(ifa_context *ctx, const ifa_op_def *def, const ifa_op_call *call, cl_command_queue queue,
                          int64_t *variants) {
    if (variants) *variants = 0;
    bound b;
    ifa_status st = bind(def, call, &b);
    size_t ws = 0;
    if (st == IFA_STATUS_OK) {
        if (b.op == 0) st = ifa_incre_flash_attention_prepare(ctx, &b.ifa, queue, variants);
        else if (b.op == 1) st = ifa_merge_attention_states_get_workspace_size(ctx, &b.merge, &ws);
        else st = ifa_kv_cache_append_get_workspace_size(ctx, &b.append, &ws);
    }
    unbind(&b);
    return st;
}

ifa_status ifa_op_run(ifa_context *ctx, const ifa_op_def *def, const ifa_op_call *call, const ifa_plan *plan,
                      cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_events_in_wait_list,
                      const cl_event *event_wait_list, cl_event *event) {
    bound b;
    ifa_status st = bind(def, call, &b);
    if (st == IFA_STATUS_OK) {
        if (b.op == 0)
            st = ifa_incre_flash_attention_run(ctx, plan, &b.ifa, workspace, workspace_offset, queue,
                                               num_events_in_wait_list, event_wait_list, event);
        else if (b.op == 1)
            st = ifa_merge_attention_states_run(ctx, &b.merge, queue, num_events_in_wait_list, event_wait_list, event);
        else
            st = ifa_kv_cache_append_run(ctx, &b.append, workspace, workspace_offset, queue, num_events_in_wait_list,
                                         event_wait_list, event);
    }
    unbind(&b);
    return st;
}
