/* Internal: the supported ranges of the ops' shapes, which their checks enforce (docs/op.md lists them). */
#ifndef IFA_CORE_LIMITS_H
#define IFA_CORE_LIMITS_H

#define IFA_MAX_BATCH 65536
#define IFA_MAX_HEADS 4096
#define IFA_MAX_KV_HEADS 256
#define IFA_MAX_HEAD_DIM 576 /* DeepSeek's MLA: a 512-wide latent and 64 rotary dims in one key row */
#define IFA_MAX_SEQ_KV 2147483647LL
#define IFA_MAX_SEQ_Q 16
#define IFA_MAX_BLOCK_SIZE 512

#endif
