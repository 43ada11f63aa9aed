#include "common/block_pool.h"

#include <stdlib.h>
#include <string.h>

int ifa_block_pool_init(ifa_block_pool *p, int32_t nblocks) {
    memset(p, 0, sizeof *p);
    if (nblocks < 1) return -1;
    const size_t n = (size_t)nblocks;
    p->nblocks = nblocks;
    p->nbuckets = nblocks;
    p->refcount = calloc(n, sizeof *p->refcount);
    p->hash = calloc(n, sizeof *p->hash);
    p->published = calloc(n, 1);
    p->lru_prev = malloc(n * sizeof *p->lru_prev);
    p->lru_next = malloc(n * sizeof *p->lru_next);
    p->free_stack = malloc(n * sizeof *p->free_stack);
    p->bucket = malloc(n * sizeof *p->bucket);
    p->chain = malloc(n * sizeof *p->chain);
    if (!p->refcount || !p->hash || !p->published || !p->lru_prev || !p->lru_next || !p->free_stack || !p->bucket ||
        !p->chain) {
        ifa_block_pool_free(p);
        return -1;
    }
    p->lru_head = p->lru_tail = -1;
    for (int32_t i = 0; i < nblocks; ++i) {
        p->free_stack[i] = nblocks - 1 - i; /* block 0 is handed out first */
        p->bucket[i] = -1, p->chain[i] = -1;
    }
    p->free_count = nblocks;
    return 0;
}

void ifa_block_pool_free(ifa_block_pool *p) {
    free(p->refcount), free(p->hash), free(p->published), free(p->lru_prev), free(p->lru_next);
    free(p->free_stack), free(p->bucket), free(p->chain);
    memset(p, 0, sizeof *p);
}

static void lru_remove(ifa_block_pool *p, int32_t b) {
    if (p->lru_prev[b] >= 0) p->lru_next[p->lru_prev[b]] = p->lru_next[b];
    else p->lru_head = p->lru_next[b];
    if (p->lru_next[b] >= 0) p->lru_prev[p->lru_next[b]] = p->lru_prev[b];
    else p->lru_tail = p->lru_prev[b];
    p->cached--;
}

static void lru_push(ifa_block_pool *p, int32_t b) {
    p->lru_prev[b] = p->lru_tail, p->lru_next[b] = -1;
    if (p->lru_tail >= 0) p->lru_next[p->lru_tail] = b;
    else p->lru_head = b;
    p->lru_tail = b;
    p->cached++;
}

static int32_t *bucket_of(ifa_block_pool *p, uint64_t hash) { return &p->bucket[hash % (uint64_t)p->nbuckets]; }

static void unpublish(ifa_block_pool *p, int32_t b) {
    int32_t *link = bucket_of(p, p->hash[b]);
    while (*link != b) link = &p->chain[*link];
    *link = p->chain[b];
    p->chain[b] = -1, p->published[b] = 0, p->hash[b] = 0;
}

int32_t ifa_block_pool_alloc(ifa_block_pool *p) {
    int32_t b;
    if (p->free_count > 0) {
        b = p->free_stack[--p->free_count];
    } else if (p->lru_head >= 0) {
        b = p->lru_head;
        lru_remove(p, b);
        unpublish(p, b);
        p->evictions++;
    } else {
        return -1;
    }
    p->refcount[b] = 1;
    p->in_use++;
    return b;
}

int32_t ifa_block_pool_lookup(ifa_block_pool *p, uint64_t hash) {
    for (int32_t b = *bucket_of(p, hash); b >= 0; b = p->chain[b]) {
        if (p->hash[b] != hash) continue;
        if (p->refcount[b]++ == 0) {
            lru_remove(p, b);
            p->in_use++;
        }
        p->hits++;
        return b;
    }
    return -1;
}

int ifa_block_pool_publish(ifa_block_pool *p, int32_t block, uint64_t hash) {
    if (block < 0 || block >= p->nblocks || p->published[block] || p->refcount[block] == 0) return -1;
    for (int32_t b = *bucket_of(p, hash); b >= 0; b = p->chain[b])
        if (p->hash[b] == hash) return -1;
    int32_t *head = bucket_of(p, hash);
    p->chain[block] = *head, *head = block;
    p->hash[block] = hash, p->published[block] = 1;
    return 0;
}

void ifa_block_pool_release(ifa_block_pool *p, int32_t block) {
    if (block < 0 || block >= p->nblocks || p->refcount[block] == 0) return;
    if (--p->refcount[block] > 0) return;
    p->in_use--;
    if (p->published[block]) lru_push(p, block);
    else p->free_stack[p->free_count++] = block;
}

int64_t ifa_block_pool_available(const ifa_block_pool *p) { return p->free_count + p->cached; }
