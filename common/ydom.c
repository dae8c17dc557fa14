/*
 * libyaml events -> the small positioned DOM of yaml.h.
 *
 * libyaml's own document loader (yaml_parser_load) resolves aliases, keeps duplicate keys
 * and stops at the first problem; the rules loader needs the opposite on all three, so the
 * tree is built here from events. Every node is attached to its parent (or to a trash list
 * when it is being dropped) the moment it starts, so a syntax error half-way through only
 * has to free the root, the trash and the keys still waiting for a value.
 */
#include "ydom.h"
#include <yaml.h> /* libyaml */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct frame {
    struct ydom_node *node;
    struct ydom_node *key; /* mapping: key waiting for its value */
    bool want_value;       /* mapping: the next node is a value */
    bool drop_value;       /* mapping: the key was rejected, so is its value */
    struct strset keys;    /* mapping: its keys, so that a duplicate costs O(1) to find */
};

struct builder {
    struct ydom_doc *doc;
    struct frame stack[YDOM_MAX_DEPTH];
    size_t depth;
    struct ydom_node **trash;
    size_t ntrash;
    bool fatal;
};

static int mark_int(size_t v)
{
    return v >= INT32_MAX ? INT32_MAX : (int)v + 1;
}

static void add_error(struct builder *b, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(struct builder *b, int line, int col, const char *fmt, ...)
{
    struct ydom_doc *d = b->doc;
    struct sbuf s = {0};
    va_list ap;

    va_start(ap, fmt);
    sbuf_vprintf(&s, fmt, ap);
    va_end(ap);
    d->errors = xgrow(d->errors, d->nerrors, sizeof(*d->errors));
    d->errors[d->nerrors].line = line;
    d->errors[d->nerrors].col = col;
    d->errors[d->nerrors].msg = sbuf_take(&s);
    d->nerrors++;
}

static void node_free(struct ydom_node *n)
{
    if (!n)
        return;
    free(n->str);
    for (size_t i = 0; i < n->nitems; i++)
        node_free(n->items[i]);
    free(n->items);
    for (size_t i = 0; i < n->npairs; i++) {
        node_free(n->pairs[i].key);
        node_free(n->pairs[i].value);
    }
    free(n->pairs);
    free(n);
}

static void trash(struct builder *b, struct ydom_node *n)
{
    b->trash = xgrow(b->trash, b->ntrash, sizeof(*b->trash));
    b->trash[b->ntrash++] = n;
}

static struct ydom_node *node_new(enum ydom_kind kind, const yaml_mark_t *mark)
{
    struct ydom_node *n = xcalloc(1, sizeof(*n));
    n->kind = kind;
    n->line = mark_int(mark->line);
    n->col = mark_int(mark->column);
    return n;
}

char *ydom_printable(const char *s, size_t len, char *buf, size_t size)
{
    size_t o = 0, max = size > 4 ? size - 4 : 0;

    for (size_t i = 0; i < len && o < max; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (o < len && size > 4) {
        /* Do not cut a UTF-8 sequence in half. */
        while (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
            o--;
        if (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0xc0)
            o--;
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    if (size > 0)
        buf[o < size ? o : size - 1] = '\0';
    return buf;
}

/* Place a new node: as the root, a sequence item, a mapping key or a mapping value. */
static void attach(struct builder *b, struct ydom_node *n)
{
    if (b->depth == 0) {
        if (!b->doc->root)
            b->doc->root = n;
        else
            trash(b, n);
        return;
    }
    struct frame *f = &b->stack[b->depth - 1];
    struct ydom_node *p = f->node;
    if (p->kind == YDOM_KIND_SEQUENCE) {
        p->items = xgrow(p->items, p->nitems, sizeof(*p->items));
        p->items[p->nitems++] = n;
        return;
    }
    if (f->want_value) {
        if (f->drop_value) {
            trash(b, n);
        } else {
            p->pairs = xgrow(p->pairs, p->npairs, sizeof(*p->pairs));
            p->pairs[p->npairs].key = f->key;
            p->pairs[p->npairs].value = n;
            p->npairs++;
        }
        f->key = NULL;
        f->want_value = false;
        f->drop_value = false;
        return;
    }
    f->want_value = true;
    if (n->kind != YDOM_KIND_SCALAR) {
        add_error(b, n->line, n->col, "mapping keys must be scalars, got %s", ydom_type_name(n));
        f->drop_value = true;
        trash(b, n);
        return;
    }
    const struct ydom_node *first = strset_put(&f->keys, n->str, n->len, n);
    if (first) {
        char q[80];
        add_error(b, n->line, n->col, "duplicate key '%s' (first at %d:%d)",
                  ydom_printable(n->str, n->len, q, sizeof(q)), first->line, first->col);
        f->drop_value = true;
        trash(b, n);
        return;
    }
    f->key = n;
}

/* An alias takes the place of a node that is not there: keep the mapping in step. */
static void skip_slot(struct builder *b)
{
    if (b->depth == 0)
        return;
    struct frame *f = &b->stack[b->depth - 1];
    if (f->node->kind != YDOM_KIND_MAPPING)
        return;
    if (f->want_value) {
        if (f->key)
            trash(b, f->key);
        f->key = NULL;
        f->want_value = false;
        f->drop_value = false;
    } else {
        f->want_value = true;
        f->drop_value = true;
    }
}

static void check_anchor(struct builder *b, const yaml_char_t *anchor, const yaml_mark_t *mark)
{
    if (!anchor)
        return;
    char q[80];
    const char *a = (const char *)anchor;
    add_error(b, mark_int(mark->line), mark_int(mark->column),
              "anchors and aliases are not supported ('&%s')",
              ydom_printable(a, strlen(a), q, sizeof(q)));
}

static void push(struct builder *b, struct ydom_node *n)
{
    if (b->depth == YDOM_MAX_DEPTH) {
        add_error(b, n->line, n->col, "nesting deeper than %d levels", YDOM_MAX_DEPTH);
        node_free(n);
        b->fatal = true;
        return;
    }
    attach(b, n);
    b->stack[b->depth].node = n;
    b->stack[b->depth].key = NULL;
    b->stack[b->depth].want_value = false;
    b->stack[b->depth].drop_value = false;
    b->stack[b->depth].keys = (struct strset){0};
    b->depth++;
}

/* Position of a reader error, which libyaml gives as a byte offset only. */
static void offset_pos(const char *buf, size_t len, size_t off, int *line, int *col)
{
    size_t l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l >= INT32_MAX ? INT32_MAX : (int)l;
    *col = c >= INT32_MAX ? INT32_MAX : (int)c;
}

static void parser_error(struct builder *b, const yaml_parser_t *p, const char *buf, size_t len)
{
    const char *problem = p->problem ? p->problem : "unknown parser error";
    int line, col;

    switch (p->error) {
    case YAML_MEMORY_ERROR:
        add_error(b, 1, 1, "out of memory while parsing");
        return;
    case YAML_READER_ERROR:
        offset_pos(buf, len, p->problem_offset, &line, &col);
        if (p->problem_value != -1)
            add_error(b, line, col, "%s (byte 0x%02x)", problem, (unsigned)p->problem_value);
        else
            add_error(b, line, col, "%s", problem);
        return;
    default:
        line = mark_int(p->problem_mark.line);
        col = mark_int(p->problem_mark.column);
        if (p->context)
            add_error(b, line, col, "%s (%s at %d:%d)", problem, p->context,
                      mark_int(p->context_mark.line), mark_int(p->context_mark.column));
        else
            add_error(b, line, col, "%s", problem);
    }
}

/*
 * An explicit tag may only state the type the node has without it: `!!str 10` would
 * otherwise turn a number into a string, and `!!int "10"` a quoted number into a number,
 * both of which the rules' type checks exist to refuse. Any other tag, including local ones
 * (`!foo`) and the non-specific `!`, is an error.
 */
static void check_tag(struct builder *b, const yaml_char_t *tag, const struct ydom_node *n)
{
    static const char core[] = "tag:yaml.org,2002:";
    static const char *const scalar_tags[] = {
        [YDOM_T_STRING] = "str", [YDOM_T_NULL] = "null",   [YDOM_T_BOOL] = "bool",
        [YDOM_T_INT] = "int",    [YDOM_T_FLOAT] = "float",
    };
    const char *t = (const char *)tag, *want;
    char q[80];

    if (!t)
        return;
    if (n->kind == YDOM_KIND_SCALAR)
        want = scalar_tags[ydom_scalar_type(n)];
    else
        want = n->kind == YDOM_KIND_MAPPING ? "map" : "seq";
    if (str_has_prefix(t, core) && strcmp(t + strlen(core), want) == 0)
        return;
    if (str_has_prefix(t, core)) {
        const char *short_name = t + strlen(core);
        add_error(b, n->line, n->col,
                  "tag '!!%s' does not match the value's type (%s); a tag cannot change a "
                  "value's type",
                  ydom_printable(short_name, strlen(short_name), q, sizeof(q)), ydom_type_name(n));
    } else {
        add_error(b, n->line, n->col, "unsupported tag '%s'",
                  ydom_printable(t, strlen(t), q, sizeof(q)));
    }
}

static void scalar_event(struct builder *b, const yaml_event_t *ev)
{
    struct ydom_node *n = node_new(YDOM_KIND_SCALAR, &ev->start_mark);
    n->len = ev->data.scalar.length;
    n->str = xmalloc(n->len + 1);
    memcpy(n->str, ev->data.scalar.value, n->len);
    n->str[n->len] = '\0';
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    check_anchor(b, ev->data.scalar.anchor, &ev->start_mark);
    check_tag(b, ev->data.scalar.tag, n);
    attach(b, n);
}

static void collection_start(struct builder *b, enum ydom_kind kind, const yaml_char_t *tag,
                             const yaml_mark_t *mark)
{
    struct ydom_node *n = node_new(kind, mark);
    check_tag(b, tag, n);
    push(b, n);
}

int ydom_load(const char *buf, size_t len, struct ydom_doc *doc)
{
    struct builder b = {.doc = doc};
    yaml_parser_t parser;
    yaml_event_t ev;
    int ndocs = 0;
    bool done = false, syntax = false;

    memset(doc, 0, sizeof(*doc));
    if (!yaml_parser_initialize(&parser)) {
        add_error(&b, 1, 1, "out of memory while parsing");
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    while (!done && !b.fatal) {
        if (!yaml_parser_parse(&parser, &ev)) {
            parser_error(&b, &parser, buf, len);
            syntax = true;
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++ndocs > 1) {
                add_error(&b, mark_int(ev.start_mark.line), mark_int(ev.start_mark.column),
                          "multiple YAML documents are not supported");
                done = true;
            }
            break;
        case YAML_SCALAR_EVENT:
            scalar_event(&b, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            check_anchor(&b, ev.data.sequence_start.anchor, &ev.start_mark);
            collection_start(&b, YDOM_KIND_SEQUENCE, ev.data.sequence_start.tag, &ev.start_mark);
            break;
        case YAML_MAPPING_START_EVENT:
            check_anchor(&b, ev.data.mapping_start.anchor, &ev.start_mark);
            collection_start(&b, YDOM_KIND_MAPPING, ev.data.mapping_start.tag, &ev.start_mark);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (b.depth > 0)
                strset_free(&b.stack[--b.depth].keys);
            break;
        case YAML_ALIAS_EVENT: {
            char q[80];
            const char *a = (const char *)ev.data.alias.anchor;
            add_error(&b, mark_int(ev.start_mark.line), mark_int(ev.start_mark.column),
                      "anchors and aliases are not supported ('*%s')",
                      ydom_printable(a, strlen(a), q, sizeof(q)));
            skip_slot(&b);
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);

    for (size_t i = 0; i < b.depth; i++) {
        node_free(b.stack[i].key);
        strset_free(&b.stack[i].keys);
    }
    for (size_t i = 0; i < b.ntrash; i++)
        node_free(b.trash[i]);
    free(b.trash);
    if (syntax || b.fatal) {
        /* A half-built tree would only produce misleading "missing key" errors. */
        node_free(doc->root);
        doc->root = NULL;
    }
    return doc->nerrors ? -1 : 0;
}

void ydom_doc_free(struct ydom_doc *doc)
{
    node_free(doc->root);
    for (size_t i = 0; i < doc->nerrors; i++)
        free(doc->errors[i].msg);
    free(doc->errors);
    memset(doc, 0, sizeof(*doc));
}

const struct ydom_node *ydom_map_get(const struct ydom_node *map, const char *key)
{
    if (!map || map->kind != YDOM_KIND_MAPPING)
        return NULL;
    size_t len = strlen(key);
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key;
        if (k->len == len && memcmp(k->str, key, len) == 0)
            return map->pairs[i].value;
    }
    return NULL;
}

static bool all_in(const char *s, const char *set)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr(set, *s))
            return false;
    return true;
}

static bool is_decimal(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    return all_in(s, "0123456789");
}

/* [-+]? ( . [0-9]+ | [0-9]+ ( . [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static bool is_float(const char *s)
{
    size_t digits = 0;

    if (*s == '-' || *s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        s++, digits++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, digits++;
    }
    if (!digits)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        return all_in(s, "0123456789");
    }
    return *s == '\0';
}

static bool is_special_float(const char *s)
{
    static const char *const names[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
    const char *t = s;

    if (*t == '-' || *t == '+')
        t++;
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        /* A sign is allowed on .inf only. */
        if (strcmp(i < 3 ? t : s, names[i]) == 0)
            return true;
    }
    return false;
}

enum ydom_scalar_type ydom_scalar_type(const struct ydom_node *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    static const char *const bools[] = {"true", "True", "TRUE", "false", "False", "FALSE"};

    if (!n || n->kind != YDOM_KIND_SCALAR || !n->plain || strlen(n->str) != n->len)
        return YDOM_T_STRING;
    for (size_t i = 0; i < ARRAY_LEN(nulls); i++)
        if (strcmp(n->str, nulls[i]) == 0)
            return YDOM_T_NULL;
    for (size_t i = 0; i < ARRAY_LEN(bools); i++)
        if (strcmp(n->str, bools[i]) == 0)
            return YDOM_T_BOOL;
    if (is_decimal(n->str) ||
        (str_has_prefix(n->str, "0x") && all_in(n->str + 2, "0123456789abcdefABCDEF")) ||
        (str_has_prefix(n->str, "0o") && all_in(n->str + 2, "01234567")))
        return YDOM_T_INT;
    if (is_float(n->str) || is_special_float(n->str))
        return YDOM_T_FLOAT;
    return YDOM_T_STRING;
}

const char *ydom_type_name(const struct ydom_node *n)
{
    if (!n)
        return "null";
    switch (n->kind) {
    case YDOM_KIND_SEQUENCE:
        return "sequence";
    case YDOM_KIND_MAPPING:
        return "mapping";
    case YDOM_KIND_SCALAR:
        break;
    }
    switch (ydom_scalar_type(n)) {
    case YDOM_T_NULL:
        return "null";
    case YDOM_T_BOOL:
        return "boolean";
    case YDOM_T_INT:
    case YDOM_T_FLOAT:
        return "number";
    case YDOM_T_STRING:
        break;
    }
    return "string";
}

int ydom_scalar_bool(const struct ydom_node *n, bool *out)
{
    if (ydom_scalar_type(n) != YDOM_T_BOOL)
        return -1;
    *out = n->str[0] == 't' || n->str[0] == 'T';
    return 0;
}

int ydom_scalar_number(const struct ydom_node *n, double *out)
{
    enum ydom_scalar_type t = ydom_scalar_type(n);
    const char *s;

    if (t != YDOM_T_INT && t != YDOM_T_FLOAT)
        return -1;
    s = n->str;
    if (str_has_prefix(s, "0x") || str_has_prefix(s, "0o")) {
        errno = 0;
        unsigned long long v = strtoull(s + 2, NULL, s[1] == 'x' ? 16 : 8);
        *out = errno == ERANGE ? HUGE_VAL : (double)v;
        return 0;
    }
    if (is_special_float(s)) {
        const char *t2 = (*s == '-' || *s == '+') ? s + 1 : s;
        if (t2[1] == 'n' || t2[1] == 'N')
            *out = NAN;
        else
            *out = *s == '-' ? -HUGE_VAL : HUGE_VAL;
        return 0;
    }
    /* strtod saturates to +-HUGE_VAL on overflow, which every range check rejects. */
    *out = strtod(s, NULL);
    return 0;
}
