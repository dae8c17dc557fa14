/* Command-line flags from a table (flags.h). */
#include "flags.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "log.h"
#include "util.h"

/* 2^53: every whole number up to it is exact in the double that holds a COUNT. */
#define COUNT_MAX 9007199254740992.0

static struct flags_def *find_len(struct flags_def *rows, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(rows[i].name) == len && strncmp(rows[i].name, name, len) == 0)
            return &rows[i];
    return NULL;
}

struct flags_def *flags_find(struct flags_def *rows, size_t n, const char *name)
{
    return find_len(rows, n, name, strlen(name));
}

/* "debug, info, warn or error" from "debug,info,warn,error". */
static void choice_list(struct sbuf *b, const char *choices)
{
    size_t count = 1, k = 0;
    for (const char *p = choices; *p; p++)
        count += *p == ',';
    for (const char *p = choices;; k++) {
        size_t len = strcspn(p, ",");
        sbuf_printf(b, "%s%.*s", k == 0 ? "" : k + 1 == count ? " or " : ", ", (int)len, p);
        if (!p[len])
            break;
        p += len + 1;
    }
}

static bool is_choice(const char *choices, const char *v)
{
    size_t vlen = strlen(v);
    for (const char *p = choices;;) {
        size_t len = strcspn(p, ",");
        if (len == vlen && strncmp(p, v, len) == 0)
            return true;
        if (!p[len])
            return false;
        p += len + 1;
    }
}

/*
 * Seconds from a number without a unit: digits with at most one '.' among them and a digit
 * on each side, so that no sign, exponent, "inf" or "nan" passes for a duration.
 */
static int bare_seconds(const char *s, double *out)
{
    size_t i = 0, digits = 0, dots = 0;
    for (; s[i]; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && digits > 0 && !dots && s[i + 1] >= '0' && s[i + 1] <= '9')
            dots++;
        else
            return -1;
    }
    if (!digits || digits > 15)
        return -1;
    *out = strtod(s, NULL);
    return 0;
}

/* The range a DURATION or COUNT row wants, for its message. */
static void want_range(struct sbuf *b, const struct flags_def *f)
{
    char lo[DUR_LEN], hi[DUR_LEN];
    if (f->type == FLAGS_DURATION && f->max > 0)
        sbuf_printf(b, "a duration from %s to %s, e.g. '%s'", dur_format(lo, sizeof(lo), f->min),
                    dur_format(hi, sizeof(hi), f->max), f->def);
    else if (f->type == FLAGS_DURATION)
        sbuf_printf(b, "a positive duration, e.g. '%s'", f->def);
    else if (f->max > 0)
        sbuf_printf(b, "a whole number from %.0f to %.0f", f->min, f->max);
    else
        sbuf_puts(b, "a whole number");
}

/* Check `v` against the row's type and fill value/num; -1 with the reason in err. */
static int set_value(struct flags_def *f, const char *v, char *err, size_t errlen)
{
    struct sbuf want = {0};
    f->value = v;
    f->bare_seconds = false;
    switch (f->type) {
    case FLAGS_STRING:
        return 0;
    case FLAGS_BOOL:
    case FLAGS_SWITCH:
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
            f->num = v[0] == 't';
            return 0;
        }
        sbuf_puts(&want, "true or false");
        break;
    case FLAGS_DURATION: {
        double lo = f->max > 0 ? f->min : 0, hi = f->max > 0 ? f->max : INFINITY;
        bool ok = dur_parse(v, &f->num) == 0;
        if (!ok && bare_seconds(v, &f->num) == 0)
            ok = f->bare_seconds = true;
        /* Without a range a duration must be positive: 0 would mean "no timeout" or a busy
           loop to one reader and "now" to another, so no flag takes it unless it says so. */
        if (ok && f->num >= lo && f->num <= hi && (f->max > 0 || f->num > 0))
            return 0;
        want_range(&want, f);
        break;
    }
    case FLAGS_COUNT: {
        uint64_t u;
        double hi = f->max > 0 ? f->max : COUNT_MAX;
        /* parse_u64 forgives leading blanks and one newline; a flag value has neither. */
        if (v[0] >= '0' && v[0] <= '9' && !strchr(v, '\n') && parse_u64(v, &u) == 0 &&
            (double)u >= f->min && (double)u <= hi) {
            f->num = (double)u;
            return 0;
        }
        want_range(&want, f);
        break;
    }
    case FLAGS_CHOICE:
        if (is_choice(f->choices, v))
            return 0;
        choice_list(&want, f->choices);
        break;
    case FLAGS_URL_PATH:
        if (v[0] == '/')
            return 0;
        sbuf_puts(&want, "a path starting with '/'");
        break;
    }
    snprintf(err, errlen, "invalid value '%s' for '--%s': want %s", v, f->name, want.buf);
    sbuf_free(&want);
    return -1;
}

static int set_defaults(struct flags_def *rows, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        rows[i].set = false;
        rows[i].num = 0;
        /* A default that does not parse is a bug in the table, reported as such. */
        if (set_value(&rows[i], rows[i].def, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int flags_parse(struct flags_def *rows, size_t n, int argc, char **argv, char **pos, size_t *npos,
                char *err, size_t errlen)
{
    size_t np = 0;
    bool only_pos = false;
    if (npos)
        *npos = 0;
    if (set_defaults(rows, n, err, errlen) != 0)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!pos) {
                snprintf(err, errlen, "unexpected argument '%s'", a);
                return -1;
            }
            pos[np++] = argv[i];
            if (npos)
                *npos = np;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        struct flags_def *f = find_len(rows, n, name, len);
        bool negated = false;
        if (!f && len > 3 && strncmp(name, "no-", 3) == 0) {
            f = find_len(rows, n, name + 3, len - 3);
            negated = f && (f->type == FLAGS_BOOL);
            if (!negated)
                f = NULL;
        }
        if (!f && strcmp(a, "-h") == 0)
            f = flags_find(rows, n, "help");
        if (!f) {
            snprintf(err, errlen, "unknown flag '%.*s'", (int)(len + (size_t)(name - a)), a);
            return -1;
        }
        const char *v;
        if (f->type == FLAGS_SWITCH && eq) {
            snprintf(err, errlen, "flag '--%s' takes no value", f->name);
            return -1;
        } else if (negated && eq) {
            snprintf(err, errlen, "flag '--no-%s' takes no value", f->name);
            return -1;
        } else if (f->type == FLAGS_BOOL || f->type == FLAGS_SWITCH) {
            v = negated ? "false" : eq ? eq + 1 : "true";
        } else if (eq) {
            v = eq + 1;
        } else if (i + 1 < argc) {
            v = argv[++i];
        } else {
            snprintf(err, errlen, "flag '--%s' needs a value", f->name);
            return -1;
        }
        if (set_value(f, v, err, errlen) != 0)
            return -1;
        f->set = true;
    }
    return 0;
}

void flags_log_warnings(const struct flags_def *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].bare_seconds)
            continue;
        char d[DUR_LEN];
        dur_format(d, sizeof(d), rows[i].num);
        log_warn("'--%s=%s' has no unit and is read as seconds (%s); write the unit, as in "
                 "'--%s=%s'",
                 rows[i].name, rows[i].value, d, rows[i].name, d);
    }
}

/* Help text from column 42, wrapped at word boundaries to stay within 100 columns. */
#define HELP_COL   42
#define HELP_WIDTH 100

static void help_text(FILE *out, const char *text, const char *suffix)
{
    struct sbuf t = {0};
    sbuf_printf(&t, "%s%s", text, suffix);
    size_t col = HELP_COL;
    for (const char *p = t.buf; *p;) {
        size_t w = strcspn(p, " ");
        if (col > HELP_COL && col + 1 + w > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_COL, "");
            col = HELP_COL;
        } else if (col > HELP_COL) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)w, p);
        col += w;
        p += w;
        p += strspn(p, " ");
    }
    fputc('\n', out);
    sbuf_free(&t);
}

void flags_help(FILE *out, const struct flags_def *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct flags_def *f = &rows[i];
        char left[128], suffix[64] = "";
        if (f->type == FLAGS_SWITCH)
            snprintf(left, sizeof(left), "--%s", f->name);
        else if (f->type == FLAGS_BOOL)
            snprintf(left, sizeof(left), "--[no-]%s", f->name);
        else
            snprintf(left, sizeof(left), "--%s=\"%s\"", f->name, f->def);
        if (f->type == FLAGS_BOOL)
            snprintf(suffix, sizeof(suffix), " (default %s)", f->def);
        if (strlen(left) > HELP_COL - 4)
            fprintf(out, "  %s\n%*s", left, HELP_COL, "");
        else
            fprintf(out, "  %-*s  ", HELP_COL - 4, left);
        help_text(out, f->help, suffix);
    }
}

int flags_usage_error(const char *prog, const char *err)
{
    fprintf(stderr, "error: %s\nrun '%s --help' for usage\n", err, prog);
    return FLAGS_EXIT_USAGE;
}
