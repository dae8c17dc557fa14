/*
 * The table of the exporter's metric families (see metrics.h). Designated initialisers tie
 * each entry to its id, so the order here is free: families are grouped by the collector
 * that publishes them.
 */
#include "metrics.h"

#define P "gpureclaim_"

const struct expo_family mx_family[MX_COUNT] = {
    [MX_EXPORTER_BUILD_INFO] = {P "exporter_build_info", EXPO_GAUGE,
                                "A metric with a constant '1' value labelled by the version of "
                                "gpureclaim-exporter."},
    [MX_SCRAPE_SOURCE_ERRORS] =
        {P "scrape_source_errors", EXPO_GAUGE,
         "Sources (files of one kind) that could not be read or parsed in this scrape; "
         "details in the log."},
    [MX_SCRAPE_COLLECTOR_DURATION_SECONDS] = {P "scrape_collector_duration_seconds", EXPO_GAUGE,
                                              "Duration of a collector scrape."},
    [MX_SCRAPE_COLLECTOR_SUCCESS] =
        {P "scrape_collector_success", EXPO_GAUGE,
         "Whether a collector succeeded (1) or met an error or found nothing to read "
         "(0); 1 with nothing to read on a node proven to have no served AMD GPU."},
    [MX_AMDGPU_DEVICE_INFO] =
        {P "amdgpu_device_info", EXPO_GAUGE,
         "Device identity as the amdgpu driver reports it through the INFO ioctl."},
    [MX_AMDGPU_MAX_ENGINE_CLOCK_HERTZ] = {P "amdgpu_max_engine_clock_hertz", EXPO_GAUGE,
                                          "Maximum engine clock."},
    [MX_AMDGPU_GPU_BUSY_RATIO] =
        {P "amdgpu_gpu_busy_ratio", EXPO_GAUGE,
         "GPU load (0-1) from the driver's GPU_LOAD sensor (same SMU value as "
         "gpu_busy_percent)."},
    [MX_AMDGPU_MEMORY_USED_BYTES] = {P "amdgpu_memory_used_bytes", EXPO_GAUGE,
                                     "Memory in use by heap, from the driver."},
    [MX_AMDGPU_MEMORY_TOTAL_BYTES] = {P "amdgpu_memory_total_bytes", EXPO_GAUGE,
                                      "Physical size of each memory heap, from the driver."},
    [MX_GPU_TEMPERATURE_CELSIUS] = {P "gpu_temperature_celsius", EXPO_GAUGE,
                                    "GPU temperature from hwmon temp*_input, by sensor label."},
    [MX_GPU_POWER_WATTS] = {P "gpu_power_watts", EXPO_GAUGE,
                            "Instantaneous GPU power from hwmon power1_input."},
    [MX_GPU_AVERAGE_POWER_WATTS] = {P "gpu_average_power_watts", EXPO_GAUGE,
                                    "Average GPU (SoC) power from hwmon power1_average."},
    [MX_GPUS_DISCOVERED] =
        {P "gpus_discovered", EXPO_GAUGE,
         "amdgpu devices found (DRM cards driven by amdgpu); 0 on a node without one."},
    [MX_PARTITIONS_DISCOVERED] =
        {P "partitions_discovered", EXPO_GAUGE,
         "Compute partitions of the amdgpu devices found; 0 on a node without one."},
    [MX_GPU_UNSERVED] =
        {P "gpu_unserved", EXPO_GAUGE,
         "An AMD GPU on the PCI bus that amdgpu does not serve (no DRM device): the "
         "driver is not loaded, not bound (driver label: what is bound, if anything) "
         "or its probe failed."},
    [MX_GPU_INFO] = {P "gpu_info", EXPO_GAUGE,
                     "Identity of an amdgpu device; the gpu label is its PCI address."},
    [MX_GPU_BUSY_RATIO] =
        {P "gpu_busy_ratio", EXPO_GAUGE,
         "GPU busy (0-1) from gpu_busy_percent, the SMU's aggregate load over the "
         "whole device."},
    [MX_GPU_MEMORY_BUSY_RATIO] = {P "gpu_memory_busy_ratio", EXPO_GAUGE,
                                  "VRAM controller busy (0-1) from mem_busy_percent."},
    [MX_GPU_MEMORY_TOTAL_BYTES] = {P "gpu_memory_total_bytes", EXPO_GAUGE,
                                   "Memory size by pool (vram, vis_vram, gtt)."},
    [MX_GPU_MEMORY_USED_BYTES] = {P "gpu_memory_used_bytes", EXPO_GAUGE,
                                  "Memory in use by pool (vram, vis_vram, gtt)."},
    [MX_GPU_METRICS_TEMPERATURE_CELSIUS] = {P "gpu_metrics_temperature_celsius", EXPO_GAUGE,
                                            "Temperature reported in gpu_metrics, by sensor."},
    [MX_GPU_METRICS_CLOCK_HERTZ] =
        {P "gpu_metrics_clock_hertz", EXPO_GAUGE,
         "Current clock frequency reported in gpu_metrics, by clock and instance."},
    [MX_GPU_METRICS_ACCUMULATION_TICKS_TOTAL] =
        {P "gpu_metrics_accumulation_ticks_total", EXPO_COUNTER,
         "Firmware accumulation ticks (about 1 ms each) seen by this exporter process: "
         "the denominator of the gpu_metrics accumulators."},
    [MX_GPU_METRICS_GFX_ACTIVITY_ACCUMULATOR_TOTAL] =
        {P "gpu_metrics_gfx_activity_accumulator_total", EXPO_COUNTER,
         "Whole-device GFX busy accumulator (percent x accumulation ticks) since the "
         "exporter started; busy ratio = increase(this) / "
         "increase(gpureclaim_gpu_metrics_accumulation_ticks_total) / 100."},
    [MX_GPU_METRICS_THROTTLE_RESIDENCY_ACCUMULATOR_TOTAL] =
        {P "gpu_metrics_throttle_residency_accumulator_total", EXPO_COUNTER,
         "Accumulation ticks spent throttled, by reason, since the exporter started."},
    [MX_GPU_METRICS_INFO] = {P "gpu_metrics_info", EXPO_GAUGE,
                             "Revision and layout of the gpu_metrics table the driver serves."},
    [MX_GPU_METRICS_ENERGY_JOULES_TOTAL] = {P "gpu_metrics_energy_joules_total", EXPO_COUNTER,
                                            "Energy consumed, from the SMU energy accumulator."},
    [MX_GPU_METRICS_XCC_BUSY_RATIO] =
        {P "gpu_metrics_xcc_busy_ratio", EXPO_GAUGE,
         "Instantaneous busy (0-1) of each XCC within a compute partition (xcp_stats "
         "gfx_busy_inst)."},
    [MX_GPU_METRICS_GFX_ACTIVITY_RATIO] = {P "gpu_metrics_gfx_activity_ratio", EXPO_GAUGE,
                                           "Average graphics/compute activity (0-1)."},
    [MX_GPU_METRICS_UMC_ACTIVITY_RATIO] = {P "gpu_metrics_umc_activity_ratio", EXPO_GAUGE,
                                           "Average memory controller activity (0-1)."},
    [MX_GPU_METRICS_MM_ACTIVITY_RATIO] = {P "gpu_metrics_mm_activity_ratio", EXPO_GAUGE,
                                          "Average multimedia engine activity (0-1)."},
    [MX_GPU_METRICS_SOCKET_POWER_WATTS] = {P "gpu_metrics_socket_power_watts", EXPO_GAUGE,
                                           "Socket power."},
    [MX_GPU_METRICS_PCIE_LINK_WIDTH] = {P "gpu_metrics_pcie_link_width", EXPO_GAUGE,
                                        "PCIe link width (lanes) as the SMU reports it."},
    [MX_GPU_METRICS_PCIE_LINK_SPEED_TRANSFERS_PER_SECOND] =
        {P "gpu_metrics_pcie_link_speed_transfers_per_second", EXPO_GAUGE,
         "PCIe link speed per lane (transfers per second)."},
    [MX_OWNER_INFO] = {P "owner_info", EXPO_GAUGE,
                       "A workload that holds a GPU partition: allocated by the kubelet "
                       "(source=kubelet), given to a container (runtime) or found using it "
                       "(process)."},
    [MX_OWNERSHIP_REFRESH_TIMESTAMP_SECONDS] = {P "ownership_refresh_timestamp_seconds", EXPO_GAUGE,
                                                "Unix time the ownership data was last refreshed."},
    [MX_OWNERSHIP_REFRESH_DURATION_SECONDS] =
        {P "ownership_refresh_duration_seconds", EXPO_GAUGE,
         "Duration of the last background refresh of ownership data."},
    [MX_OWNERSHIP_SOURCE_UP] =
        {P "ownership_source_up", EXPO_GAUGE,
         "Whether the last ownership refresh could read the source (kubelet "
         "pod-resources, container runtime API, procfs, KFD process files)."},
    [MX_PARTITION_ACCUMULATION_TICKS_TOTAL] =
        {P "partition_accumulation_ticks_total", EXPO_COUNTER,
         "Accumulation ticks (about 1 ms each) seen by this exporter process for a "
         "partition: the denominator of "
         "gpureclaim_partition_gfx_busy_accumulator_total."},
    [MX_GPU_METRICS_XCC_GFX_BUSY_ACCUMULATOR_TOTAL] =
        {P "gpu_metrics_xcc_gfx_busy_accumulator_total", EXPO_COUNTER,
         "GFX busy accumulator (percent x accumulation ticks) of one XCC within a "
         "partition since the exporter started."},
    [MX_PARTITION_GFX_BUSY_ACCUMULATOR_TOTAL] =
        {P "partition_gfx_busy_accumulator_total", EXPO_COUNTER,
         "GFX busy accumulator of a partition (percent x accumulation ticks, mean over "
         "its XCCs) since the exporter started; exact busy ratio over a window = "
         "increase(this) / increase(gpureclaim_partition_accumulation_ticks_total) / "
         "100."},
    [MX_GPU_PARTITIONS] =
        {P "gpu_partitions", EXPO_GAUGE,
         "Valid compute partitions of the GPU (KFD topology nodes; 1 without KFD)."},
    [MX_PARTITION_INFO] = {P "partition_info", EXPO_GAUGE,
                           "A compute partition of a GPU: its DRM nodes, the id the device plugin "
                           "allocates (device_id), its KFD node and the source of its busy ratio."},
    [MX_PARTITION_BUSY_RATIO] =
        {P "partition_busy_ratio", EXPO_GAUGE,
         "Compute busy (0-1) of a partition, averaged over its XCCs; absent when the "
         "kernel exposes no per-partition activity."},
    [MX_PARTITION_MEMORY_TOTAL_BYTES] =
        {P "partition_memory_total_bytes", EXPO_GAUGE,
         "Memory of the partition's KFD node (sum of its mem_banks size_in_bytes)."},
    [MX_SPARE_PARTITION_NODES] =
        {P "spare_partition_nodes", EXPO_GAUGE,
         "amdgpu XCP render nodes with no KFD topology node: spare nodes the driver "
         "creates whatever the partition mode, not partitions."},
    [MX_GPU_COMPUTE_PARTITION_MODE] =
        {P "gpu_compute_partition_mode", EXPO_GAUGE,
         "Compute partition mode of the GPU: 1 for the current mode, 0 for the other "
         "available modes."},
    [MX_GPU_MEMORY_PARTITION_MODE] =
        {P "gpu_memory_partition_mode", EXPO_GAUGE,
         "Memory partition (NPS) mode of the GPU: 1 for the current mode, 0 for the "
         "other available modes."},
    [MX_WORKLOAD_CU_OCCUPANCY] =
        {P "workload_cu_occupancy", EXPO_GAUGE,
         "Compute units occupied now by the workload's KFD queues on the partition "
         "(sum of KFD cu_occupancy; ROCm compute, not seen in fdinfo)."},
    [MX_WORKLOAD_CU_OCCUPANCY_RATIO] =
        {P "workload_cu_occupancy_ratio", EXPO_GAUGE,
         "KFD cu_occupancy of the workload divided by the partition's compute units "
         "(0-1)."},
    [MX_WORKLOAD_VRAM_BYTES] = {P "workload_vram_bytes", EXPO_GAUGE,
                                "VRAM the workload allocated through KFD on the partition (KFD "
                                "vram_<gpu_id>)."},
    [MX_WORKLOAD_SDMA_SECONDS_TOTAL] =
        {P "workload_sdma_seconds_total", EXPO_COUNTER,
         "SDMA (copy engine) busy time of the workload's processes on the partition "
         "(KFD sdma_<gpu_id>)."},
    [MX_WORKLOAD_EVICTED_SECONDS_TOTAL] =
        {P "workload_evicted_seconds_total", EXPO_COUNTER,
         "Time the workload's KFD queues on the partition were evicted (KFD "
         "evicted_ms)."},
    [MX_WORKLOAD_ENGINE_SECONDS_TOTAL] =
        {P "workload_engine_seconds_total", EXPO_COUNTER,
         "DRM scheduler busy time of the workload's deduplicated DRM clients on the "
         "partition, per engine (fdinfo drm-engine-*; ROCm compute shows 0)."},
    [MX_WORKLOAD_MEMORY_BYTES] =
        {P "workload_memory_bytes", EXPO_GAUGE,
         "Resident memory of the workload's DRM clients on the partition, per region "
         "(fdinfo drm-resident-*)."},
    [MX_WORKLOAD_PROCESSES] =
        {P "workload_processes", EXPO_GAUGE,
         "Processes of the workload using the partition (a DRM client on its node, or "
         "KFD memory, queues or waves on its gpu_id)."},
    [MX_PROCESS_CU_OCCUPANCY] =
        {P "process_cu_occupancy", EXPO_GAUGE,
         "Compute units occupied now by the process's KFD queues on the partition (sum "
         "of KFD cu_occupancy; ROCm compute, not seen in fdinfo)."},
    [MX_PROCESS_CU_OCCUPANCY_RATIO] =
        {P "process_cu_occupancy_ratio", EXPO_GAUGE,
         "KFD cu_occupancy of the process divided by the partition's compute units "
         "(0-1)."},
    [MX_PROCESS_VRAM_BYTES] =
        {P "process_vram_bytes", EXPO_GAUGE,
         "VRAM the process allocated through KFD on the partition (KFD vram_<gpu_id>)."},
    [MX_PROCESS_SDMA_SECONDS_TOTAL] =
        {P "process_sdma_seconds_total", EXPO_COUNTER,
         "SDMA (copy engine) busy time of the process's processes on the partition "
         "(KFD sdma_<gpu_id>)."},
    [MX_PROCESS_EVICTED_SECONDS_TOTAL] =
        {P "process_evicted_seconds_total", EXPO_COUNTER,
         "Time the process's KFD queues on the partition were evicted (KFD "
         "evicted_ms)."},
    [MX_PROCESS_ENGINE_SECONDS_TOTAL] =
        {P "process_engine_seconds_total", EXPO_COUNTER,
         "DRM scheduler busy time of the process's deduplicated DRM clients on the "
         "partition, per engine (fdinfo drm-engine-*; ROCm compute shows 0)."},
    [MX_PROCESS_MEMORY_BYTES] =
        {P "process_memory_bytes", EXPO_GAUGE,
         "Resident memory of the process's DRM clients on the partition, per region "
         "(fdinfo drm-resident-*)."},
};
