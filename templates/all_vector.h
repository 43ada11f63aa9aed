/* Internal: the all-vector template, turning a plan into a kernel build and launch. */
#ifndef IFA_TEMPLATES_ALL_VECTOR_H
#define IFA_TEMPLATES_ALL_VECTOR_H

#include "ifa/ifa.h"

/* A kernel shape's program: the files of op_kernel/ it is built from, in this order, as one source text (each may
 * use what the ones before it define; op_kernel/ifa_all_vector_options.cl says what each holds, and the last,
 * the shape's kernel, includes the .clh pieces every shape shares), and the name of its kernel. */
enum { IFA__ALL_VECTOR_SOURCES = 9 };
typedef struct ifa__av_program {
    const char *sources[IFA__ALL_VECTOR_SOURCES];
    const char *kernel;
} ifa__av_program;

/* The program of shape (ifa_kernel_shape; the four chunk shapes, vector to key_tile, share one), or NULL for
 * IFA_SHAPE_NONE and any value that is not a shape. */
const ifa__av_program *ifa__all_vector_program(int32_t shape);

/* Enqueues the fused kernel for args (already checked against plan) on queue after the wait list, and
 * with split-KV the combine kernel after it. The plan's workspace regions start at workspace_offset.
 * *event receives the last kernel's event, and *first (if not NULL) the first kernel's (the caller releases
 * both). With queue NULL it only builds (or finds in ctx's cache) every kernel such a launch needs, as on an
 * in-order queue (args' tensors then only decide the alignment rules; their buffers may be NULL). */
ifa_status ifa__all_vector_launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                                  cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                                  const cl_event *wait, cl_event *first, cl_event *event);

/* The build options of plan's fused kernel (max_pass 0) or of its max pass (1: global-rowmax plans only) on a device
 * of vendor, as a launch with K/V rows 16-byte aligned on an in-order queue builds them, into out (size bytes), and
 * into *program (if not NULL) the program they build (a matrix plan's max pass runs a chunk shape). Returns 0 when
 * plan is not an all-vector plan, has no such kernel, or the options do not fit. */
int ifa__all_vector_options(const ifa_plan *plan, int32_t vendor, int max_pass, char *out, size_t size,
                            const ifa__av_program **program);

/* Launches each kernel of plan once, one work-group over scratch (ifa__all_vector_warm_bytes, zero-filled) with
 * every length 0, on queue: a driver that generates a kernel's code at its first launch (PoCL, per work-group
 * size) does so here rather than in a run. The variants are those a run with args' tensors takes (args' offsets
 * decide the alignment rules; no buffer of args is read or written). *event: the last kernel's. */
ifa_status ifa__all_vector_warm(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                                cl_mem scratch, cl_command_queue queue, cl_event *event);
/* The bytes of a warm launch's scratch buffer for plan. */
size_t ifa__all_vector_warm_bytes(const ifa_plan *plan);
/* Where a warm launch writes nothing: words [0, *zero_words) (the inputs, read as zeros) and from *guard_word to
 * the end (returned: the words there). */
size_t ifa__all_vector_warm_unwritten(const ifa_plan *plan, size_t *zero_words, size_t *guard_word);

#endif
