/*
 * Unit tests of GPU and partition discovery on the fixture trees: card10+ cards, partitions
 * from KFD topology in both XCP naming forms, spare SPX nodes excluded, device-plugin ids,
 * cached static facts, and bad cards reported without hiding the good ones.
 */
#include "gpu.c"

#include "test.h"
#include "tmptree.h"

static int discover(const char *tree, struct gpu_list *l)
{
    char root[256], err[256] = "";
    snprintf(root, sizeof(root), "tests/fixtures/%s/sys", tree);
    int rc = gpu_discover(root, l, err, sizeof(err));
    if (rc < 0)
        fprintf(stderr, "discover %s: %s\n", tree, err);
    return rc;
}

TEST(cpx_node_has_8_gpus_and_64_partitions)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("mi300x-cpx", &l), 0);
    TEST_CHECK_INT(l.n, 8);
    TEST_CHECK(l.kfd);
    TEST_CHECK_INT(l.spare_nodes, 0);
    int parts = 0;
    for (size_t i = 0; i < l.n; i++)
        parts += l.v[i].npart;
    TEST_CHECK_INT(parts, 64);
    /* Sorted by PCI address; GPU 0 takes card0/renderD128 and its partitions the next 7. */
    TEST_CHECK_STR(l.v[0].pci, "0000:05:00.0");
    TEST_CHECK_STR(l.v[7].pci, "0000:e5:00.0");
    TEST_CHECK_INT(l.v[0].card, 0);
    TEST_CHECK_INT(l.v[0].render, 128);
    TEST_CHECK_INT(l.v[0].part[0].index, 0);
    TEST_CHECK_STR(l.v[0].part[0].device_id, "0000:05:00.0");
    TEST_CHECK_INT(l.v[0].part[3].render, 131);
    TEST_CHECK_INT(l.v[0].part[3].card, 3);
    TEST_CHECK_STR(l.v[0].part[3].device_id, "amdgpu_xcp_2");
    TEST_CHECK_INT(l.v[0].part[3].num_xcc, 1);
    TEST_CHECK_INT(l.v[0].part[0].kfd_gpu_id, 7488);
    /* The generated 64th node (absent from the real capture) is GPU 7's partition 7. */
    TEST_CHECK_INT(l.v[7].part[7].render, 191);
    TEST_CHECK_STR(l.v[7].part[7].device_id, "amdgpu_xcp_55");
    /* Static facts read once at discovery. */
    TEST_CHECK_STR(l.v[0].product, "AMD Instinct MI300X");
    TEST_CHECK_STR(l.v[0].compute_mode, "CPX");
    TEST_CHECK_STR(l.v[0].memory_mode, "NPS4");
    TEST_CHECK_INT(l.v[0].ntemp, 2);
    TEST_CHECK_STR(l.v[0].temp[0].label, "junction");
    TEST_CHECK(l.v[0].has_power_input && l.v[0].has_power_average);
    TEST_CHECK(!l.v[1].has_power_average || !l.v[1].has_power_input);
    const struct gpu *g = NULL;
    const struct gpu_part *p = NULL;
    TEST_CHECK(gpu_find_render(&l, 146, &g, &p) && g && p);
    if (!g || !p) {
        gpu_list_free(&l);
        return;
    }
    TEST_CHECK_STR(g->pci, "0000:47:00.0");
    TEST_CHECK_INT(p->index, 2);
    TEST_CHECK(gpu_find_device_id(&l, "AMDGPU_XCP_15", &g, &p));
    TEST_CHECK_INT(p->render, 146);
    TEST_CHECK(!gpu_find_render(&l, 300, &g, &p));
    gpu_list_free(&l);
}

TEST(spx_spare_nodes_are_not_partitions)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("mi300x-spx", &l), 0);
    TEST_CHECK_INT(l.n, 1);
    TEST_CHECK_INT(l.v[0].npart, 1);
    TEST_CHECK_INT(l.v[0].part[0].num_xcc, 8);
    /* Old naming amdgpu_xcp.N: 7 render nodes exist, none validated by KFD. */
    TEST_CHECK_INT(l.spare_nodes, 7);
    TEST_CHECK_STR(l.v[0].compute_mode, "SPX");
    gpu_list_free(&l);
}

TEST(dpx_partitions_with_xcp_metrics)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("mi300x-dpx", &l), 0);
    TEST_CHECK_INT(l.n, 1);
    TEST_CHECK_INT(l.v[0].npart, 2);
    TEST_CHECK(l.v[0].part[0].has_xcp_metrics);
    TEST_CHECK(l.v[0].part[1].has_xcp_metrics);
    TEST_CHECK_STR(l.v[0].part[1].device_id, "amdgpu_xcp_0");
    TEST_CHECK_INT(l.spare_nodes, 6);
    gpu_list_free(&l);
}

TEST(real_capture_without_kfd)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("procfs-drm", &l), 0);
    /* card0 is amdgpu, card1 is i915 and must not be reported. */
    TEST_CHECK_INT(l.n, 1);
    TEST_CHECK(!l.kfd);
    TEST_CHECK_STR(l.v[0].pci, "0000:09:00.0");
    TEST_CHECK_INT(l.v[0].npart, 1);
    TEST_CHECK_STR(l.v[0].part[0].device_id, "0000:09:00.0");
    TEST_CHECK_STR(l.v[0].unique_id, "0123456789abcdef");
    TEST_CHECK_INT(l.nproblems, 0);
    gpu_list_free(&l);
}

TEST(broken_card_reported_others_kept)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("broken", &l), 0);
    /* card2 has no device/uevent: a problem, not a GPU; card3 after it and card10/11 are. */
    TEST_CHECK_INT(l.nproblems, 1);
    TEST_CHECK_STR(l.problems[0].card, "card2");
    TEST_CHECK_CONTAINS(l.problems[0].what, "card2/device/uevent");
    bool card3 = false, card10 = false, card11 = false, card2 = false;
    for (size_t i = 0; i < l.n; i++) {
        card2 |= l.v[i].card == 2;
        card3 |= l.v[i].card == 3;
        card10 |= l.v[i].card == 10;
        card11 |= l.v[i].card == 11;
    }
    TEST_CHECK(!card2 && card3 && card10 && card11);
    gpu_list_free(&l);
}

TEST(missing_root_is_an_error)
{
    struct gpu_list l;
    char err[256] = "";
    TEST_CHECK_INT(gpu_discover("/nonexistent-sysfs", &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "/nonexistent-sysfs/class/drm");
    gpu_list_free(&l);
}

/* Nodes without a served AMD GPU (tests/fixtures/node-*, around a real H200 VM's PCI bus). */
TEST(node_without_amd_gpu_is_not_an_error)
{
    static const char *const trees[] = {"node-no-drm", "node-empty-drm", "node-nvidia-drm"};
    for (size_t i = 0; i < ARRAY_LEN(trees); i++) {
        struct gpu_list l;
        TEST_CHECK_INT(discover(trees[i], &l), 0);
        TEST_CHECK_INT(l.n, 0);
        TEST_CHECK_INT(l.nproblems, 0);
        TEST_CHECK(l.pci_known);
        TEST_CHECK_INT(l.amd_pci, 0);
        TEST_CHECK_INT(l.nunserved, 0);
        TEST_CHECK(l.has_drm == (i > 0));
        gpu_list_free(&l);
    }
}

TEST(unserved_amd_gpus_are_named)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("node-amd-unserved", &l), 0);
    TEST_CHECK_INT(l.n, 0);
    TEST_CHECK(l.pci_known && !l.has_drm);
    /* Two MI300X functions; the AMD HDMI audio function (class 0x0403) is not a GPU. */
    TEST_CHECK_INT(l.amd_pci, 2);
    TEST_CHECK_INT(l.nunserved, 2);
    if (l.nunserved == 2) {
        TEST_CHECK_STR(l.unserved[0].pci, "0000:00:07.0");
        TEST_CHECK_STR(l.unserved[0].pci_id, "1002:74A1");
        TEST_CHECK_STR(l.unserved[0].driver, "");
        TEST_CHECK_STR(l.unserved[1].pci, "0000:00:08.0");
        TEST_CHECK_STR(l.unserved[1].driver, "vfio-pci");
    }
    gpu_list_free(&l);
}

TEST(served_gpus_are_not_unserved)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("mi300x-cpx", &l), 0);
    TEST_CHECK_INT(l.amd_pci, 8);
    TEST_CHECK_INT(l.nunserved, 0);
    gpu_list_free(&l);
    /* broken: card2's function has no class file (not known to be a GPU) and card5 cannot be
     * identified (a card problem): neither is also called unserved. */
    TEST_CHECK_INT(discover("broken", &l), 0);
    TEST_CHECK_INT(l.nunserved, 0);
    gpu_list_free(&l);
    /* procfs-drm has no bus/pci: unserved GPUs are unknown, not "none". */
    TEST_CHECK_INT(discover("procfs-drm", &l), 0);
    TEST_CHECK(!l.pci_known && l.has_drm);
    gpu_list_free(&l);
}

TEST(no_drm_and_no_pci_bus_is_an_error_radeon_is_unserved)
{
    char root[PATH_MAX], err[256] = "";
    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "gpu-unknown"), 0);
    struct gpu_list l;
    /* Neither class/drm nor bus/pci/devices: nothing tells whether the node has GPUs. */
    TEST_CHECK_INT(gpu_discover(root, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "bus/pci/devices");
    gpu_list_free(&l);
    /* An AMD GPU whose DRM card belongs to radeon is not served by amdgpu either. */
    const char *dev = "bus/pci/devices/0000:03:00.0";
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/vendor", dev);
    TEST_CHECK_INT(tmptree_put(root, p, "0x1002\n"), 0);
    snprintf(p, sizeof(p), "%s/device", dev);
    TEST_CHECK_INT(tmptree_put(root, p, "0x6798\n"), 0);
    snprintf(p, sizeof(p), "%s/class", dev);
    TEST_CHECK_INT(tmptree_put(root, p, "0x030000\n"), 0);
    snprintf(p, sizeof(p), "%s/uevent", dev);
    TEST_CHECK_INT(tmptree_put(root, p, "DRIVER=radeon\nPCI_SLOT_NAME=0000:03:00.0\n"), 0);
    TEST_CHECK_INT(
        tmptree_symlink(root, "bus/pci/devices/0000:03:00.0/driver", "../../drivers/radeon"), 0);
    TEST_CHECK_INT(tmptree_mkdirs(root, "bus/pci/drivers/radeon"), 0);
    TEST_CHECK_INT(tmptree_symlink(root, "bus/pci/devices/0000:03:00.0/drm/card0/device",
                                   "../../../0000:03:00.0"),
                   0);
    TEST_CHECK_INT(
        tmptree_symlink(root, "class/drm/card0", "../../bus/pci/devices/0000:03:00.0/drm/card0"),
        0);
    TEST_CHECK_INT(gpu_discover(root, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n, 0);
    TEST_CHECK_INT(l.nunserved, 1);
    if (l.nunserved == 1) {
        TEST_CHECK_STR(l.unserved[0].pci_id, "1002:6798");
        TEST_CHECK_STR(l.unserved[0].driver, "radeon");
    }
    gpu_list_free(&l);
    tmptree_remove(root);
}

TEST(numbered_names)
{
    TEST_CHECK_INT(numbered("card12", "card"), 12);
    TEST_CHECK_INT(numbered("card1-DP-1", "card"), -1);
    TEST_CHECK_INT(numbered("card", "card"), -1);
    TEST_CHECK_INT(numbered("renderD191", "renderD"), 191);
    TEST_CHECK_INT(numbered("renderDx", "renderD"), -1);
    TEST_CHECK_INT(numbered("99999999999", ""), -1);
}

TEST(kfd_properties_parser)
{
    struct kfd_node k;
    parse_properties("simd_count 152\ndrm_render_minor 130\nlocation_id 1282\ndomain 0\n"
                     "num_xcc 1\nbogus\nunique_id 16404946649897475633\nsimd_count x\n",
                     &k);
    TEST_CHECK_INT(k.simd_count, 152);
    TEST_CHECK(k.has_minor && k.render_minor == 130);
    TEST_CHECK(k.has_location && (k.location_id & 7) == 2);
    TEST_CHECK_INT(k.num_xcc, 1);
    parse_properties("", &k);
    TEST_CHECK(!k.has_minor && !k.has_location && k.num_xcc == -1);
}

/* A partition's memory is the sum of its KFD node's banks, read once at discovery. */
TEST(partition_memory_from_kfd_mem_banks)
{
    struct gpu_list l;
    TEST_CHECK_INT(discover("mi300x-cpx", &l), 0);
    for (size_t i = 0; i < l.n; i++)
        for (int j = 0; j < l.v[i].npart; j++)
            TEST_CHECK_INT(l.v[i].part[j].mem_bytes, 206158430208 / 4); /* NPS4 */
    gpu_list_free(&l);
    TEST_CHECK_INT(discover("mi300x-spx", &l), 0);
    TEST_CHECK_INT(l.v[0].part[0].mem_bytes, 206158430208);
    gpu_list_free(&l);
    TEST_CHECK_INT(discover("procfs-drm", &l), 0); /* no KFD: unknown, not 0 */
    TEST_CHECK_INT(l.v[0].part[0].mem_bytes, -1);
    gpu_list_free(&l);
}

TEST(kfd_mem_banks_sum_or_unknown)
{
    char root[256], node[300];
    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "test_gpu_banks"), 0);
    snprintf(node, sizeof(node), "%s/n", root);
    TEST_CHECK_INT(kfd_mem_bytes(node), -1); /* no mem_banks directory */
    tmptree_put(root, "n/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 1000\nflags 0\n");
    tmptree_put(root, "n/mem_banks/1/properties", "heap_type 2\nsize_in_bytes 24\n");
    TEST_CHECK_INT(kfd_mem_bytes(node), 1024);
    /* A bank without a readable size makes the sum unknown rather than short. */
    tmptree_put(root, "n/mem_banks/2/properties", "heap_type 1\nsize_in_bytes abc\n");
    TEST_CHECK_INT(kfd_mem_bytes(node), -1);
    tmptree_remove(root);
}

int main(void)
{
    RUN(cpx_node_has_8_gpus_and_64_partitions);
    RUN(spx_spare_nodes_are_not_partitions);
    RUN(dpx_partitions_with_xcp_metrics);
    RUN(real_capture_without_kfd);
    RUN(broken_card_reported_others_kept);
    RUN(missing_root_is_an_error);
    RUN(node_without_amd_gpu_is_not_an_error);
    RUN(unserved_amd_gpus_are_named);
    RUN(served_gpus_are_not_unserved);
    RUN(no_drm_and_no_pci_bus_is_an_error_radeon_is_unserved);
    RUN(numbered_names);
    RUN(kfd_properties_parser);
    RUN(partition_memory_from_kfd_mem_banks);
    RUN(kfd_mem_banks_sum_or_unknown);
    return test_done();
}
