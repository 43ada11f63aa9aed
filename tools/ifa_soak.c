#define _POSIX_C_SOURCE 200809L /* setenv, mkdir */
/* ifa-soak: runs random legal IncreFlashAttention cases (tools/common/random_case.c) on a device, each checked
 * against the float64 reference, and writes every case that fails or is refused to --out as a case file with
 * the command that replays it. Combinations the feature tests do not list one by one are where a soak run
 * looks; the seeds make any finding reproducible. --op append draws KVCacheAppend cases instead, each checked
 * row by row against the float64 append with every other element unchanged (ifa-run --check's check), and
 * --op merge MergeAttentionStates cases against the float64 merge.
 *   ifa-soak [--cases 100] [--seed 1] [--op ifa|append|merge] [--out DIR] [--device SELECTOR] [--tuning SPEC]
 *            [--facts SPEC] [--draw-knobs] [--quiet]
 * Case i draws from seed * 1000003 + i. Exit status: 0 every case passed, 1 a case failed or was refused,
 * 2 bad usage, 3 no device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/append_check.h"
#include "common/args.h"
#include "common/case.h"
#include "common/env_check.h"
#include "common/generic_run.h"
#include "common/merge_case.h"
#include "common/random_case.h"
#include "ifa/ifa.h"
#include "op_host/runtime/context.h"

static int usage(FILE *f) {
    fputs("usage: ifa-soak [options]\n"
          "  Runs random legal cases against the float64 reference; a failing or refused case is written to --out with\n"
          "  the command that replays it. Exit 0 when every case passed, 1 otherwise.\n"
          "  --cases N                     cases to run (default 100)\n"
          "  --seed S                      the first case's seed (default 1); a seed's case is the same on every run\n"
          "  --op ifa|append|merge         IncreFlashAttention (default), KVCacheAppend or MergeAttentionStates cases\n"
          "  --out DIR                     where failures go (default: ifa-soak-failures beside the ifa-soak binary)\n"
          "  --device SELECTOR             P:D (as clinfo -l) or part of a device name (default: $IFA_DEVICE, else the first)\n"
          "  --tuning SPEC                 IFA_TUNING entries added after each case's own (mma=2: the matrix shape\n"
          "                                wherever a case fits it)\n"
          "  --draw-knobs                  each case also draws the knobs its own draw leaves at the row's (prefetches,\n"
          "                                P.V blocks, widths, chunks, the balance, split floors, work-groups), before --tuning's\n"
          "  --facts SPEC                  IFA_DEVICE_FACTS entries added after each case's own (compute_units=132); one in\n"
          "                                the environment is taken as --facts\n"
          "  --wide SHARE                  the share of cases past 256 columns (D = 512 or MLA's 576; 0 to 1, default 0.05)\n"
          "  --quiet                       no line per case, only failures and the summary\n"
          "  --help                        this text\n",
          f);
    return f == stdout ? 0 : 2;
}

/* Writes the case and prints how to replay it. */
static void keep(const char *dir, uint64_t seed, const ifa_random_case *rc, const char *why) {
    char path[1200];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ifa-soak: cannot make %s: %s\n", dir, strerror(errno));
        return;
    }
    snprintf(path, sizeof path, "%s/soak_%llu.json", dir, (unsigned long long)seed);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "ifa-soak: cannot write %s\n", path);
        return;
    }
    fprintf(f, "%s\n", rc->json);
    fclose(f);
    printf("  %s: %s\n  replay: IFA_TUNING='%s' IFA_DEVICE_FACTS='%s' ifa-run %s --check%s\n", why, rc->summary,
           rc->tuning, rc->facts, path, rc->far_kv ? " --far-kv" : rc->buffer_create ? " --buffer-create" : "");
}

/* A case the generator wrote but its parser refused (err says why): reported and kept. */
static void unreadable(const char *dir, uint64_t s, const ifa_random_case *rc, const char *err) {
    printf("case %llu: the generator wrote a case ifa-run cannot read: %s\n", (unsigned long long)s, err);
    keep(dir, s, rc, "unreadable");
}

/* A legal case the op (or the tool's run around it) refused with st, why: reported and kept. */
static void refused(const char *dir, uint64_t s, const ifa_random_case *rc, ifa_status st, const char *why) {
    printf("case %llu: refused: %s: %s\n", (unsigned long long)s, ifa_status_name(st), why);
    keep(dir, s, rc, "refused");
}

/* One random KVCacheAppend case: 1 passed, 0 failed or refused (kept in dir). */
static int soak_append(ifa_context *ctx, cl_command_queue q, uint64_t s, const ifa_random_case *rc, const char *dir,
                       int quiet) {
    char err[1024];
    ifa_generic_case c;
    if (ifa_generic_case_parse(rc->json, ".", &c, err, sizeof err) != 0) {
        unreadable(dir, s, rc, err);
        return 0;
    }
    if (rc->far_kv) c.cache_base_bytes = ifa_generic_case_far_caches_base(ifa_context_device(ctx), &c);
    ifa_generic_run r;
    const ifa_status st = ifa_generic_case_run(ctx, q, &c, ifa_append_written, 0, NULL, &r);
    int ok = 0;
    if (st != IFA_STATUS_OK) {
        refused(dir, s, rc, st, r.error);
    } else {
        const ifa_host_tensor *outs[IFA_GENERIC_WRITTEN];
        ifa_append_after(&r, outs);
        ifa_append_check k = {0};
        ok = ifa_append_case_check(&c, outs, &k) == 0 && k.pass;
        if (!quiet || !ok)
            printf("case %llu: %s; tuning %s -> rows %lld bad_rows %lld worst_error/bound %.3g changed_elsewhere %lld "
                   "%s\n", (unsigned long long)s, rc->summary, rc->tuning[0] ? rc->tuning : "(device row)",
                   (long long)k.rows, (long long)k.bad_rows, k.worst, (long long)k.changed, ok ? "PASS" : "FAIL");
        if (!ok) keep(dir, s, rc, "failed");
        ifa_generic_run_free(&r);
    }
    ifa_generic_case_free(&c);
    return ok;
}

/* One random MergeAttentionStates case: 1 passed, 0 failed or refused (kept in dir). */
static int soak_merge(ifa_context *ctx, cl_command_queue q, uint64_t s, const ifa_random_case *rc, const char *dir,
                      int quiet) {
    char err[1024];
    ifa_merge_case c;
    if (ifa_merge_case_parse(rc->json, ".", &c, err, sizeof err) != 0) {
        unreadable(dir, s, rc, err);
        return 0;
    }
    ifa_merge_result r;
    const ifa_status st = ifa_merge_case_run(ctx, q, &c, &r);
    int ok = 0;
    if (st != IFA_STATUS_OK) {
        refused(dir, s, rc, st, r.error);
    } else {
        ifa_merge_case_check(&c, &r);
        ok = r.pass;
        if (!quiet || !ok)
            printf("case %llu: %s -> rel_l2 %.3g (tol %.0e) nonfinite %lld lse_bad %lld %s\n", (unsigned long long)s,
                   rc->summary, r.rel_l2, r.tolerance, (long long)r.nonfinite, (long long)r.lse_bad, ok ? "PASS" : "FAIL");
        if (!ok) keep(dir, s, rc, "failed");
        ifa_merge_result_free(&r);
    }
    ifa_merge_case_free(&c);
    return ok;
}

/* Appends entries to the comma-separated list in buf (size bytes, cut at its end): later entries win where both
 * IFA_TUNING and IFA_DEVICE_FACTS are read. */
static void append_entries(char *buf, size_t size, const char *entries) {
    const size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", used ? "," : "", entries);
}

int main(int argc, char **argv) {
    if (ifa_arg_help(argc, argv)) return usage(stdout);
    long long cases = 100, seed = 1;
    /* failures by default beside the binary (the build folder), not in the folder it runs from (a source tree) */
    char default_dir[4096] = "ifa-soak-failures";
    const char *slash = strrchr(argv[0], '/');
    if (slash) snprintf(default_dir, sizeof default_dir, "%.*s/ifa-soak-failures", (int)(slash - argv[0]), argv[0]);
    const char *dir = default_dir, *device = NULL, *op = "ifa", *extra = NULL;
    /* each case sets IFA_DEVICE_FACTS for itself: one the caller set becomes every case's last word */
    const char *facts = getenv("IFA_DEVICE_FACTS");
    char facts_env[256] = "";
    if (facts) facts = strncpy(facts_env, facts, sizeof facts_env - 1);
    int quiet = 0, knobs = 0;
    double wide = 0.05;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--draw-knobs") == 0) knobs = 1;
        else if (i + 1 >= argc) return ifa_arg_unknown("ifa-soak", argv[i]), usage(stderr);
        else if (strcmp(argv[i], "--cases") == 0) {
            if (ifa_arg_int("ifa-soak", argv[i], argv[i + 1], 1, IFA_ARG_NO_MAX, &cases) != 0) return 2;
            ++i;
        } else if (strcmp(argv[i], "--seed") == 0) {
            if (ifa_arg_int("ifa-soak", argv[i], argv[i + 1], 0, 1000000000LL, &seed) != 0) return 2;
            ++i;
        }
        else if (strcmp(argv[i], "--out") == 0) dir = argv[++i];
        else if (strcmp(argv[i], "--device") == 0) device = argv[++i];
        else if (strcmp(argv[i], "--op") == 0) op = argv[++i];
        else if (strcmp(argv[i], "--tuning") == 0) extra = argv[++i];
        else if (strcmp(argv[i], "--facts") == 0) facts = argv[++i];
        else if (strcmp(argv[i], "--wide") == 0) {
            char *end;
            wide = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(wide >= 0.0 && wide <= 1.0)) {
                fprintf(stderr, "ifa-soak: --wide \"%s\": the share must be a number from 0 to 1\n", argv[i]);
                return 2;
            }
        } else return ifa_arg_unknown("ifa-soak", argv[i]), usage(stderr);
    }
    const int append = strcmp(op, "append") == 0, merge = strcmp(op, "merge") == 0;
    if (!append && !merge && strcmp(op, "ifa") != 0) {
        fprintf(stderr, "ifa-soak: --op %s: want ifa, append or merge\n", op);
        return 2;
    }
    /* the planner skips a bad entry silently; a soak asked for it must not run without it (the facts below, against
     * the device, with --facts) */
    if (ifa_tool_check_tuning("ifa-soak", "--tuning", extra, "--facts") != 0 ||
        ifa_tool_check_tuning("ifa-soak", "IFA_TUNING", getenv("IFA_TUNING"), NULL) != 0)
        return 2;
    ifa_context *ctx;
    if (ifa_context_create_default(device, &ctx) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-soak: %s\n", ifa_last_error());
        return 3;
    }
    if (ifa_tool_check_facts("ifa-soak", "--facts (or IFA_DEVICE_FACTS)", facts, &ctx->facts) != 0) {
        ifa_context_destroy(ctx);
        return 2;
    }
    cl_int cerr;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(ctx), ifa_context_device(ctx), 0, &cerr);
    if (!q) {
        fprintf(stderr, "ifa-soak: clCreateCommandQueue failed (%d)\n", (int)cerr);
        ifa_context_destroy(ctx);
        return 3;
    }
    long long failed = 0, by_template[3] = {0}, by_split[4] = {0}, by_shape[5] = {0}, fused = 0;
    for (long long i = 0; i < cases; ++i) {
        const uint64_t s = (uint64_t)seed * 1000003u + (uint64_t)i;
        ifa_random_case rc;
        if ((append  ? ifa_random_append_case_make(s, &rc)
             : merge ? ifa_random_merge_case_make(s, &rc)
                     : ifa_random_case_make_wide(s, wide, &rc)) != 0) {
            fprintf(stderr, "ifa-soak: out of memory\n");
            failed++;
            break;
        }
        if (knobs && !append && !merge) { /* after the case's own entries, before --tuning's */
            char k[700];
            if (ifa_random_tuning_knobs(s, rc.tuning, k, sizeof k) == 0) append_entries(rc.tuning, sizeof rc.tuning, k);
        }
        if (extra && *extra) append_entries(rc.tuning, sizeof rc.tuning, extra); /* after the case's own */
        if (rc.tuning[0]) setenv("IFA_TUNING", rc.tuning, 1);
        else unsetenv("IFA_TUNING");
        if (facts && *facts) append_entries(rc.facts, sizeof rc.facts, facts); /* after the case's own */
        if (rc.facts[0]) setenv("IFA_DEVICE_FACTS", rc.facts, 1);
        else unsetenv("IFA_DEVICE_FACTS");
        if (append || merge) {
            failed += !(append ? soak_append : soak_merge)(ctx, q, s, &rc, dir, quiet);
            ifa_random_case_free(&rc);
            fflush(stdout);
            continue;
        }
        char err[1024];
        ifa_case c;
        ifa_case_result r;
        ifa_case_check k = {0};
        int ok = 0;
        if (ifa_case_parse(rc.json, ".", &c, err, sizeof err) != 0) {
            unreadable(dir, s, &rc, err);
        } else {
            c.kv_from_buffer_create = rc.buffer_create;
            if (rc.far_kv) c.kv_base_bytes = ifa_case_far_kv_base(ifa_context_device(ctx), &c);
            const ifa_status st = ifa_case_run(ctx, q, &c, NULL, NULL, &r);
            if (st != IFA_STATUS_OK) {
                refused(dir, s, &rc, st, r.error);
            } else {
                if (ifa_case_check_result(&c, &r, &k) == 0 && k.pass) ok = 1;
                const int t = r.plan.template_id == IFA_TEMPLATE_CV ? 2 : 1, sp = r.plan.split_kv;
                by_template[t]++;
                if (sp >= 0 && sp < 4) by_split[sp]++;
                by_shape[r.plan.mma ? 2 : r.plan.lanes ? 1 : 0]++;
                if (r.plan.mma >= 3 && r.plan.mma <= 6) by_shape[3]++; /* the transposed ones, among the matrix shapes */
                if (r.plan.mma == 7) by_shape[4]++;                        /* the latent tile, among them */
                fused += r.plan.fused_combine;
                if (!quiet || !ok)
                    printf("case %llu: %s; tuning %s%s%s; template %s split %d -> rel_l2 %.3g (tol %.0e) lse_bad %lld "
                           "nonfinite %lld int8_bad %lld bytes_outside %lld %s\n", (unsigned long long)s, rc.summary,
                           rc.tuning[0] ? rc.tuning : "(device row)", rc.facts[0] ? "; facts " : "", rc.facts,
                           t == 2 ? "cv" : "all_vector", sp, k.rel_l2,
                           k.tolerance, (long long)k.lse_bad, (long long)k.nonfinite, (long long)k.int8_bad,
                           (long long)k.outside, ok ? "PASS" : "FAIL");
                if (!ok) keep(dir, s, &rc, "failed");
                ifa_case_result_free(&r);
            }
            ifa_case_free(&c);
        }
        failed += !ok;
        ifa_random_case_free(&rc);
        fflush(stdout);
    }
    unsetenv("IFA_TUNING");
    unsetenv("IFA_DEVICE_FACTS");
    if (append || merge)
        printf("soak: %lld %s cases, %lld passed, %lld failed\n", cases, append ? "KVCacheAppend" : "MergeAttentionStates",
               cases - failed, failed);
    else
        printf("soak: %lld cases, %lld passed, %lld failed; all_vector %lld, cv %lld; split none %lld, partial %lld, "
               "global %lld, balanced %lld; matrix shape %lld (transposed %lld, latent tile %lld), lane shape %lld; last "
               "split combines %lld\n", cases, cases - failed, failed, by_template[1], by_template[2], by_split[0],
               by_split[1], by_split[2], by_split[3], by_shape[2], by_shape[3], by_shape[4], by_shape[1], fused);
    clReleaseCommandQueue(q);
    ifa_context_destroy(ctx);
    return failed ? 1 : 0;
}
