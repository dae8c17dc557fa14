/*
 * libFuzzer target for the notice annotation's codec (enforcer/notice.c), which reads what an
 * owner can edit on their object: parsing arbitrary bytes never crashes and reads no byte past
 * `len` (ASan, on an exact-size copy), and fails with a message or yields a notice that
 * encodes to JSON which parses back to the same notice and encodes to the same bytes again
 * (parse(encode(x)) == x). A second notice is built from the input itself (strings cut at NUL
 * bytes, whole-second times from its bytes): it too must survive encode then parse unchanged,
 * so an escaping slip in the writer traps. Seeds: fuzz/corpus/notice.
 */
#include "notice.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encode `n`, parse it back: traps unless it reads back equal, and encodes to the same bytes. */
static void fuzz_round_trip(const struct notice *n)
{
    char err[160] = "";
    char *s = notice_encode(n);
    struct notice back;
    if (notice_parse(s, strlen(s), &back, err, sizeof(err)) < 0 || !notice_equal(n, &back))
        __builtin_trap();
    char *again = notice_encode(&back);
    if (strcmp(s, again) != 0)
        __builtin_trap();
    free(again);
    notice_free(&back);
    free(s);
}

/* The next NUL-terminated piece of the input as a string member, or NULL when it is not valid
   UTF-8 (the parser refuses such strings, and the engine never writes them). */
static char *fuzz_piece(const uint8_t **p, const uint8_t *end)
{
    if (*p >= end)
        return NULL;
    const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
    size_t n = z ? (size_t)(z - *p) : (size_t)(end - *p);
    char *s = utf8_valid(*p, n) ? xstrndup((const char *)*p, n) : NULL;
    *p += n + (z ? 1 : 0);
    return s;
}

static double fuzz_time(const uint8_t **p, const uint8_t *end)
{
    if (end - *p < 4)
        return NAN;
    uint32_t v;
    memcpy(&v, *p, 4);
    *p += 4;
    return v == 0xffffffffu ? NAN : (double)v; /* 1970 to 2106: whole seconds */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[160] = "";
    /* an exact-size copy: ASan sees any read past `size` */
    char *exact = xcalloc(size ? size : 1, 1);
    memcpy(exact, data, size);
    struct notice n;
    if (notice_parse(exact, size, &n, err, sizeof(err)) == 0)
        fuzz_round_trip(&n);
    else if (!err[0])
        __builtin_trap();
    notice_free(&n);
    free(exact);

    const uint8_t *p = data, *end = data + size;
    struct notice b;
    notice_init(&b);
    b.act_at = fuzz_time(&p, end);
    b.idle_since = fuzz_time(&p, end);
    b.noticed_at = fuzz_time(&p, end);
    b.acted_at = fuzz_time(&p, end);
    b.rule = fuzz_piece(&p, end);
    b.action = fuzz_piece(&p, end);
    b.window = fuzz_piece(&p, end);
    b.threshold = fuzz_piece(&p, end);
    b.uid = fuzz_piece(&p, end);
    if (p < end && (*p & 1)) {
        b.acted.present = true;
        b.acted.has_generation = *p & 2;
        b.acted.generation = (int64_t)(size * 977) - 3000;
        b.acted.has_replicas_before = *p & 4;
        b.acted.replicas_before = *p >> 3;
        p++;
        b.acted.way = fuzz_piece(&p, end);
        b.acted.uid = fuzz_piece(&p, end);
        b.acted.key = fuzz_piece(&p, end);
        b.acted.value = fuzz_piece(&p, end);
        /* an undo as the parser yields it: a JSON object, in json-c's own text */
        char *u = fuzz_piece(&p, end);
        json_object *o = u ? jsonparse_strict(u, strlen(u), 16, "undo", err, sizeof(err)) : NULL;
        if (o && json_object_is_type(o, json_type_object)) {
            const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE);
            if (utf8_valid(t, strlen(t)))
                b.acted.undo = xstrdup(t);
        }
        json_object_put(o);
        free(u);
    }
    fuzz_round_trip(&b);
    notice_free(&b);
    return 0;
}
