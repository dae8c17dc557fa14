/*
 * A small YAML document model built from libyaml's event parser, in the manner of h2o's yoml:
 * scalars, sequences and mappings, each with the 1-based line and column where it starts, so
 * that the rules loader can name file:line:col for every problem it finds.
 *
 * Deliberate limits, all reported as errors rather than silently accepted:
 *  - one document per input (a second `---` is an error);
 *  - anchors and aliases are rejected: rules files have `defaults:` for sharing values, and
 *    refusing aliases rules out "billion laughs" expansion;
 *  - mapping keys must be scalars and unique; a duplicate is reported with the position of
 *    the first occurrence and dropped, so the rest of the document can still be checked;
 *  - nesting is limited to YDOM_MAX_DEPTH levels.
 *  - mapping keys are kept in a hash set while their mapping is built, so duplicates cost
 *    linear time even for a mapping with 100,000 keys;
 *  - an explicit tag must name the core-schema type the node has without it (`!!str` on a
 *    string, `!!int` on a plain integer, `!!map`, ...): a tag never changes a type, so
 *    `!!str 10` and `!!int "10"` are errors, as are local tags and `!`.
 * Plain (unquoted) scalars are typed with the YAML 1.2 core schema, so
 * `yes`, `on` and `09:00` are strings, while any quoted scalar is always a string.

 */
#ifndef GPURECLAIM_YDOM_H
#define GPURECLAIM_YDOM_H

#include <stdbool.h>
#include <stddef.h>

#define YDOM_MAX_DEPTH 64

enum ydom_kind { YDOM_KIND_SCALAR, YDOM_KIND_SEQUENCE, YDOM_KIND_MAPPING };

/* Type of a scalar under the YAML 1.2 core schema; quoted scalars are always strings. */
enum ydom_scalar_type { YDOM_T_STRING, YDOM_T_NULL, YDOM_T_BOOL, YDOM_T_INT, YDOM_T_FLOAT };

struct ydom_pair {
    struct ydom_node *key; /* always a scalar */
    struct ydom_node *value;
};

struct ydom_node {
    enum ydom_kind kind;
    int line, col; /* 1-based position of the node's first character */

    /* YDOM_KIND_SCALAR: NUL-terminated text (may contain NULs from "\0"; len is exact). */
    char *str;
    size_t len;
    bool plain; /* unquoted, not a block scalar: subject to core-schema typing */

    /* YDOM_KIND_SEQUENCE */
    struct ydom_node **items;
    size_t nitems;

    /* YDOM_KIND_MAPPING, in file order, keys unique */
    struct ydom_pair *pairs;
    size_t npairs;
};

/* A problem found while loading, without the file name (the caller adds it). */
struct ydom_error {
    int line, col;
    char *msg; /* git style: lower-case, no final full stop */
};

struct ydom_doc {
    struct ydom_node *root; /* NULL when the input holds no document */
    struct ydom_error *errors;
    size_t nerrors;
};

/*
 * Parse `buf` (UTF-8/16 with optional BOM) into `doc` (overwritten). Returns 0, or
 * -1 when doc->errors is non-empty. After a syntax error root is NULL; after the recoverable
 * errors (duplicate key, alias, anchor, non-scalar key, second document) root holds what was
 * understood. Free with ydom_doc_free() in both cases.
 */
int ydom_load(const char *buf, size_t len, struct ydom_doc *doc);
void ydom_doc_free(struct ydom_doc *doc);

/* Value for `key` in a mapping node, or NULL (also when `map` is not a mapping). */
const struct ydom_node *ydom_map_get(const struct ydom_node *map, const char *key);

enum ydom_scalar_type ydom_scalar_type(const struct ydom_node *n);
/* What a node is, for messages: "string", "number", "boolean", "null", "sequence", "mapping". */
const char *ydom_type_name(const struct ydom_node *n);
/* Value of a plain bool / number scalar (0x and 0o integers, .inf, .nan included); -1 if not. */
int ydom_scalar_bool(const struct ydom_node *n, bool *out);
int ydom_scalar_number(const struct ydom_node *n, double *out);

/*
 * Copy `s` (len bytes) into `buf` for quoting in a message: control characters become '?'
 * and text longer than the buffer is cut at a character boundary and ends in "...".
 */
char *ydom_printable(const char *s, size_t len, char *buf, size_t size);

#endif
