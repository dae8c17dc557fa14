/* Strict json-c parsing (jsonparse.h). */
#include "jsonparse.h"

#include <stdint.h>
#include <stdio.h>

#include "utf8.h"

json_object *jsonparse_strict(const char *s, size_t len, int depth, const char *what, char *err,
                              size_t errlen)
{
    /* json_tokener_parse_ex takes an int length. */
    if (len > (size_t)INT32_MAX) {
        snprintf(err, errlen, "%s of %zu bytes is too large", what, len);
        return NULL;
    }
    if (len == 0) {
        snprintf(err, errlen, "empty answer for %s", what);
        return NULL;
    }
    /*
     * JSON text is UTF-8 (RFC 8259 section 8.1). json-c's own check lets overlong forms and
     * surrogates through, so the whole input is checked first.
     */
    if (!utf8_valid(s, len)) {
        snprintf(err, errlen, "invalid UTF-8 in %s", what);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(depth);
    if (!tok) {
        snprintf(err, errlen, "cannot create a JSON parser");
        return NULL;
    }
    /* Trailing characters are allowed here only to be reported below as what they are. */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                    JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = json_tokener_parse_ex(tok, s, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!root && jerr == json_tokener_success && end <= len) {
        /* A bare `null`: json-c's NULL root says nothing else. No caller wants one. */
        snprintf(err, errlen, "%s is null", what);
        return NULL;
    }
    if (!root || jerr != json_tokener_success) {
        if (jerr == json_tokener_continue || jerr == json_tokener_success)
            snprintf(err, errlen, "truncated JSON in %s (%zu bytes)", what, len);
        else
            snprintf(err, errlen, "invalid JSON in %s at offset %zu: %s", what, end,
                     json_tokener_error_desc(jerr));
        json_object_put(root);
        return NULL;
    }
    while (end < len && (s[end] == ' ' || s[end] == '\t' || s[end] == '\r' || s[end] == '\n'))
        end++;
    if (end < len) {
        snprintf(err, errlen, "trailing data in %s at offset %zu", what, end);
        json_object_put(root);
        return NULL;
    }
    return root;
}
