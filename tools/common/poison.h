/* Poisoning what an IncreFlashAttention case must not read, so that a kernel that reads it fails the check. */
#ifndef IFA_TOOLS_POISON_H
#define IFA_TOOLS_POISON_H

#include "common/runner.h"

/* Sets NaN in every key/value element outside the rows the op may read: for each batch b, logical positions
 * [lo_b, L_b) (L_b its length after kv padding, lo_b where the window of its earliest query token starts),
 * at their contiguous rows or their pool rows through the block table; so padding, rows past the length,
 * rows before the window, unused pool blocks and the unused rows of a batch's last block all read NaN.
 * Integer KV cannot hold NaN: its per-token scales and offsets (antiquant modes 1-3) are poisoned instead at
 * the same rows. Shared-prefix rows past actual_shared_prefix_len are poisoned too, and so are the query's
 * padding tokens (t >= actual_seq_lengths_q[b]; a batch without query tokens reads no key row). The float64 reference
 * reads only visible positions, so a correct kernel still passes. Returns 0, or -1 (nothing or part
 * poisoned) on shapes that do not fit together, which the op refuses itself, or no memory. */
int ifa_case_poison_unread(ifa_case *c);

#endif
