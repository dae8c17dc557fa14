/*
 * Unit tests of the amdgpu ioctl collector: the mapping from libdrm result structures to
 * metrics (there is no device here), and that a missing devfs is reported as "no data".
 */
#include "collector_amdgpu.c"

#include "test.h"
#include "tmptree.h"

static char *render(struct expo *e)
{
    struct sbuf b = {0};
    expo_render(e, &b);
    return sbuf_take(&b);
}

TEST(full_sample_maps_to_base_units)
{
    struct amdgpu_sample s = {0};
    s.has_load = true;
    s.load_percent = 37;
    s.has_vram_usage = s.has_gtt_usage = true;
    s.vram_usage = 1490378752;
    s.gtt_usage = 144560128;
    s.has_mem = true;
    s.mem.vram.total_heap_size = 206158430208ULL;
    s.mem.cpu_accessible_vram.total_heap_size = 268435456;
    s.mem.gtt.total_heap_size = 8573157376ULL;
    s.has_info = true;
    s.info.asic_id = 0x74a1;
    s.info.chip_rev = 1;
    s.info.family_id = 141;
    s.info.max_engine_clk = 2100000; /* kHz */
    struct expo *e = expo_new();
    map_sample(&s, "0000:05:00.0", e);
    char *out = render(e);
    TEST_CHECK_CONTAINS(out, "gpureclaim_amdgpu_gpu_busy_ratio{gpu=\"0000:05:00.0\"} 0.37\n");
    TEST_CHECK_CONTAINS(
        out,
        "gpureclaim_amdgpu_memory_used_bytes{gpu=\"0000:05:00.0\",pool=\"vram\"} 1490378752\n");
    TEST_CHECK_CONTAINS(
        out, "gpureclaim_amdgpu_memory_used_bytes{gpu=\"0000:05:00.0\",pool=\"gtt\"} 144560128\n");
    TEST_CHECK_CONTAINS(out, "gpureclaim_amdgpu_memory_total_bytes{gpu=\"0000:05:00.0\","
                             "pool=\"vram\"} 206158430208\n");
    TEST_CHECK_CONTAINS(out, "pool=\"vis_vram\"} 268435456\n");
    TEST_CHECK_CONTAINS(out, "gpureclaim_amdgpu_device_info{gpu=\"0000:05:00.0\",asic_id="
                             "\"0x74a1\",chip_rev=\"1\",family_id=\"141\"} 1\n");
    TEST_CHECK_CONTAINS(out, "gpureclaim_amdgpu_max_engine_clock_hertz{gpu=\"0000:05:00.0\"} "
                             "2100000000\n");
    free(out);
    expo_free(e);
}

TEST(failed_ioctls_are_omitted_not_zero)
{
    struct amdgpu_sample s = {0};
    s.has_vram_usage = true;
    s.vram_usage = 0; /* a real zero is reported */
    struct expo *e = expo_new();
    map_sample(&s, "g", e);
    char *out = render(e);
    TEST_CHECK_CONTAINS(out, "gpureclaim_amdgpu_memory_used_bytes{gpu=\"g\",pool=\"vram\"} 0\n");
    TEST_CHECK(strstr(out, "busy_ratio") == NULL);
    TEST_CHECK(strstr(out, "pool=\"gtt\"") == NULL);
    TEST_CHECK(strstr(out, "device_info") == NULL);
    TEST_CHECK(strstr(out, "total_bytes") == NULL);
    free(out);
    expo_free(e);
}

TEST(no_device_node_is_no_data)
{
    struct coll_cfg cfg = {.devfs = "/nonexistent-devfs", .rediscover_interval = 60};
    char dir[256];
    TEST_CHECK_INT(tmptree_make(dir, sizeof(dir), "gpureclaim-amdgpu"), 0);
    /* A sysfs tree whose card has a render node, so the collector tries to open it. */
    TEST_CHECK_INT(tmptree_put(dir, "sys/class/drm/card0/device/uevent",
                               "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:05:00.0\n"),
                   0);
    TEST_CHECK_INT(tmptree_symlink(dir, "sys/class/drm/renderD128/device", "../card0/device"), 0);
    char sys[512];
    snprintf(sys, sizeof(sys), "%s/sys", dir);
    cfg.sysfs = sys;
    struct expo *e = expo_new();
    struct coll_ctx ctx = {.cfg = &cfg, .e = e, .collector = "amdgpu"};
    char err[256] = "";
    TEST_CHECK_INT(amdgpu_update(&ctx, err, sizeof(err)), COLL_NO_DATA);
    TEST_CHECK_CONTAINS(err, "/nonexistent-devfs/dri/renderD128");
    TEST_CHECK_INT(expo_samples(e), 0);
    coll_ctx_release(&ctx);
    coll_fini();
    expo_free(e);
    TEST_CHECK_INT(tmptree_remove(dir), 0);
}

int main(void)
{
    log_set_level("error");
    RUN(full_sample_maps_to_base_units);
    RUN(failed_ioctls_are_omitted_not_zero);
    RUN(no_device_node_is_no_data);
    return test_done();
}
