/* A host-side KV block allocator with prefix caching, as an engine keeps one beside its paged cache:
 * blocks are reference-counted; a full block can be published under the hash of the token prefix it holds,
 * so a later sequence with the same prefix reuses it instead of recomputing it; when a published block's
 * last reference goes it stays cached (its contents intact) until space is needed, and then the least
 * recently released cached block is evicted first. Pure C, no OpenCL: unit-tested in tests/test_tools.c. */
#ifndef IFA_TOOLS_BLOCK_POOL_H
#define IFA_TOOLS_BLOCK_POOL_H

#include <stdint.h>

typedef struct ifa_block_pool {
    int32_t nblocks;
    int32_t *refcount;
    uint64_t *hash;          /* the prefix hash a published block holds */
    uint8_t *published;
    int32_t *lru_prev, *lru_next; /* cached blocks (published, refcount 0), least recently released first */
    int32_t lru_head, lru_tail;
    int32_t *free_stack;     /* unpublished blocks with refcount 0 */
    int32_t free_count;
    int32_t *bucket, *chain; /* hash -> published block: bucket heads and per-block chain links */
    int32_t nbuckets;
    int64_t in_use;          /* blocks with refcount > 0 */
    int64_t cached;          /* published blocks with refcount 0 */
    int64_t evictions;       /* cached blocks taken back for new contents */
    int64_t hits;            /* lookups that found a block */
} ifa_block_pool;

/* A pool of nblocks free blocks; 0, or -1 when out of memory or nblocks < 1. */
int ifa_block_pool_init(ifa_block_pool *p, int32_t nblocks);
void ifa_block_pool_free(ifa_block_pool *p);
/* A block for new contents (refcount 1): a free one, else the least recently released cached block, which
 * is unpublished first (an eviction). -1 when every block is in use. */
int32_t ifa_block_pool_alloc(ifa_block_pool *p);
/* The published block holding the prefix with this hash, with one more reference (taken off the cached
 * list if it was there); -1 if none. */
int32_t ifa_block_pool_lookup(ifa_block_pool *p, uint64_t hash);
/* Publishes a full block under the hash of the prefix it holds. Returns 0, or -1 (and changes nothing) when
 * another block already holds that prefix or the block is published already. */
int ifa_block_pool_publish(ifa_block_pool *p, int32_t block, uint64_t hash);
/* Drops one reference; at 0 a published block becomes the most recently released cached block and an
 * unpublished one becomes free. */
void ifa_block_pool_release(ifa_block_pool *p, int32_t block);
/* Blocks an alloc could still return (free plus cached). */
int64_t ifa_block_pool_available(const ifa_block_pool *p);

#endif
