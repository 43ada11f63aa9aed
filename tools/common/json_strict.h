/* Case files as strict JSON: what cJSON alone lets through (text after the case's object, a key twice in an object,
 * a misspelt top-level key that is then ignored) refused with the place and, for an unknown key, the nearest known
 * one. */
#ifndef IFA_TOOLS_JSON_STRICT_H
#define IFA_TOOLS_JSON_STRICT_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Parses text as one JSON object followed by nothing but white space, with no key twice in any object of it and,
 * when top_keys is not NULL, no top-level key outside top_keys' ntop names. Returns the tree (cJSON_Delete it), or
 * NULL with a message in err. Time and memory are linear in the text (n log n for an object's keys). */
cJSON *ifa_json_parse_case(const char *text, const char *const *top_keys, size_t ntop, char *err, size_t err_size);

/* The name among names[0 .. n) nearest to s by edit distance (for "did you mean"); NULL when none is within half
 * of s's length. */
const char *ifa_json_nearest(const char *s, const char *const *names, size_t n);

#endif
