/*
 * Unit tests of rechtml.c: the escaping of every character HTML gives a meaning, a hostile
 * label value in every place a value goes (heading, attributes, titles), the marked points'
 * data attributes in --output json's formats, one point per grid setting, and a page without
 * anything that loads (tests/e2e/recommend.sh renders it in Chromium).
 */
#include "rechtml.c"

#include "test.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

TEST(escape)
{
    struct sbuf b = {0};
    rechtml_escape(&b, "a<b>&\"c\"'d'\x01\tz\n");
    TEST_CHECK_STR(b.buf, "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;&#xFFFD;\tz\n");
    sbuf_free(&b);
    rechtml_escape(&b, "");
    TEST_CHECK(b.len == 0);
    sbuf_free(&b);
}

#define P(th, it, no, rc, rw, gh)                                                                  \
    {                                                                                              \
        .threshold = (th), .idle_timer = (it), .notice = (no), .reclaims = (rc),                   \
        .returns_within = (rw), .gpu_seconds = (gh)*3600.0, .median_return = NAN                   \
    }

TEST(hostile_page)
{
    static const char evil[] = "</svg><script>alert(1)</script>";
    struct rec_point pts[] = {
        P(5, 900, 0, 20, 10, 30), P(5, 3600, 0, 10, 1, 20), P(2, 3600, 0, 8, 0, 12.345678),
        P(2, 86400, 0, 0, 0, 0), /* no reclaims: no share, drawn hollow */
    };
    struct rec_point cur = P(10, 900, 0, 25, 20, 33);
    struct rechtml_group g[] = {
        {.rule = "r<1>",
         .name = "r-1",
         .value = evil,
         .workloads = 3,
         .cur = &cur,
         .pts = pts,
         .chosen = 2,
         .held = &pts[1]},
        {.rule = "r<1>",
         .name = "r-2",
         .value = "ok",
         .workloads = 1,
         .cur = &cur,
         .pts = pts,
         .chosen = -1,
         .reason = "not enough data: <none>"},
    };
    struct rechtml_page pg = {.rules_file = "a&b.yaml",
                              .by = "namespace",
                              .chosen_from = "2023-10-29T06:00:00Z",
                              .chosen_to = "2023-11-01T19:30:00Z",
                              .interval = 300,
                              .return_within = 3600,
                              .max_share = 0.2,
                              .npts = 4,
                              .note = "what <the history> cannot show",
                              .g = g,
                              .ng = 2};
    struct sbuf b = {0};
    rechtml_render(&pg, &b);
    const char *h = b.buf;
    TEST_CHECK(strstr(h, "<script") == NULL);
    TEST_CHECK(strstr(h, evil) == NULL);
    TEST_CHECK(strstr(h, "namespace=&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;</span>"));
    TEST_CHECK(strstr(h, "data-value=\"&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""));
    TEST_CHECK(strstr(h, "data-rule=\"r&lt;1&gt;\""));
    TEST_CHECK(strstr(h, "recommend: a&amp;b.yaml</h1>"));
    TEST_CHECK(strstr(h, "not enough data: &lt;none&gt;"));
    TEST_CHECK(strstr(h, "what &lt;the history&gt; cannot show"));
    /* two charts, each with every grid point, one current mark; one recommended mark */
    TEST_CHECK_INT(count(h, "<svg class=\"rec-chart\""), 2);
    TEST_CHECK_INT(count(h, "<circle class=\"point"), 2 * 4 + 2 /* legends */);
    TEST_CHECK_INT(count(h, "<rect class=\"current\" x=") - 2 /* legends */, 2);
    TEST_CHECK_INT(count(h, "<circle class=\"recommended\" cx=") - 2 /* legends */, 1);
    TEST_CHECK_INT(count(h, "class=\"point no-reclaims\""), 2);
    TEST_CHECK(strstr(h, "<circle class=\"recommended\" cx=") &&
               strstr(strstr(h, "<circle class=\"recommended\" cx="),
                      "data-threshold=\"2\" data-idle-timer=\"1h\" data-notice-period=\"0s\" "
                      "data-gpu-hours-freed=\"12.345678\" data-reclaims=\"8\" "
                      "data-returns-within=\"0\" data-return-share=\"0.000000\">"));
    TEST_CHECK(strstr(h, "data-threshold=\"10\" data-idle-timer=\"15m\" data-notice-period=\"0s\" "
                         "data-gpu-hours-freed=\"33.000000\" data-reclaims=\"25\" "
                         "data-returns-within=\"20\" data-return-share=\"0.800000\">"
                         "<title>current (the rules file): "));
    TEST_CHECK(strstr(h, "data-reclaims=\"0\" data-returns-within=\"0\" data-return-share=\"\""));
    TEST_CHECK_INT(count(h, "class=\"target\" data-share=\"0.200000\""), 2);
    /* nothing that loads: the only URL is the SVG namespace */
    TEST_CHECK_INT(count(h, "://"), count(h, "http://www.w3.org/2000/svg"));
    TEST_CHECK(strstr(h, "default-src 'none'"));
    sbuf_free(&b);
}

int main(void)
{
    RUN(escape);
    RUN(hostile_page);
    return test_done();
}
