#include "cli/reports/preset_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cli/reports/quantities.hpp"
#include "cli/reports/table.hpp"
#include "models/accelerators.hpp"
#include "models/attention_kernels.hpp"
#include "models/job_spec.hpp"

namespace stepsim::cli {

namespace {

std::vector<ClusterSpec> all_presets() {
  std::vector<ClusterSpec> out;
  for (const auto& name : cluster_preset_names()) out.push_back(*find_cluster_preset(name));
  return out;
}

// TFLOP/s to a tenth, grouped by thousands: 989.4, 1,978.9, 2,250.
std::string tflops(double flops) {
  const long long tenths = std::llround(flops / 1e11);
  const std::string whole = comma_grouped(tenths / 10);
  return tenths % 10 == 0 ? whole : fmt::format("{}.{}", whole, tenths % 10);
}

std::string efficiency_text(const Efficiency& e) {
  return fmt::format("gemm {:.2f}, attention {:.2f}, memory {:.2f}, fabric {:.2f}, network {:.2f}, contention {:.2f}",
                     e.gemm, e.attention, e.memory, e.fabric, e.network, e.contention);
}

}  // namespace

std::string presets_text() {
  Table t({{"preset", false},
           {"architecture", false},
           {"BF16 TFLOP/s"},
           {"FP8 TFLOP/s"},
           {"FP4 TFLOP/s"},
           {"HBM GB/s"},
           {"memory GiB"},
           {"usable GiB"},
           {"SMs"},
           {"GPUs a node"},
           {"NVLink GB/s"},
           {"NICs a node"},
           {"NIC Gbit/s"}});
  const auto presets = all_presets();
  bool same_efficiency = true;
  for (const auto& c : presets) {
    const AcceleratorSpec& a = c.accelerator;
    t.add_row(std::vector<std::string>{
        a.name, architecture_name(a.architecture), tflops(a.peak_bf16), a.peak_fp8 > 0 ? tflops(a.peak_fp8) : "none",
        a.peak_fp4 > 0 ? tflops(a.peak_fp4) : "none", comma_grouped(a.hbm_bandwidth / 1'000'000'000),
        fmt::format("{:g}", gib(a.memory)), fmt::format("{:g}", gib(a.usable_memory)), std::to_string(a.tiling.sms),
        std::to_string(c.node.gpus),
        c.node.fabric_bandwidth > 0 ? comma_grouped(c.node.fabric_bandwidth / 1'000'000'000) : "none (PCIe)",
        std::to_string(c.network.nics), fmt::format("{:g}", static_cast<double>(c.network.nic_bandwidth) * 8 / 1e9)});
    same_efficiency = same_efficiency && a.efficiency == presets.front().accelerator.efficiency;
  }
  // The hosts, which an offloaded optimizer runs on (layout offload_optimizer).
  Table hosts({{"preset", false}, {"host link GB/s"}, {"host memory GiB"}, {"host memory GB/s"}});
  // Whole numbers with thousands grouped, 409.6 as it is.
  const auto figure = [](double x) {
    return x == std::round(x) ? comma_grouped(static_cast<std::int64_t>(x)) : fmt::format("{:g}", x);
  };
  for (const auto& c : presets)
    hosts.add_row({c.accelerator.name, comma_grouped(c.node.pcie_bandwidth / 1'000'000'000),
                   figure(std::round(gib(c.node.host_memory))),
                   figure(static_cast<double>(c.node.host_memory_bandwidth) / 1e9)});
  std::string out =
      "accelerator presets (job_step.hardware.preset; each value's source in models/accelerators.cpp)\n\n" + t.render();
  out += "\npeaks are dense; NVLink is each GPU's, each direction; memory and usable memory per GPU\n";
  out +=
      "\nhosts: each GPU's link to its host (each direction), the host memory of a node and its bandwidth (a peak)\n" +
      hosts.render() + "\n";
  out +=
      "attention: flash runs each architecture's own fused kernel at its efficiency (cuDNN's on Hopper and "
      "Blackwell, FlashAttention-2 on Ampere and Ada); flash2 and flash3 name one (docs/attention.md)\n";
  if (same_efficiency)
    out += fmt::format("efficiencies, every preset's (uncalibrated): {}\n",
                       efficiency_text(presets.front().accelerator.efficiency));
  else
    for (const auto& c : presets)
      out += fmt::format("efficiencies of {} (uncalibrated): {}\n", c.accelerator.name,
                         efficiency_text(c.accelerator.efficiency));
  out +=
      "calibrated on published runs: scenarios/hardware/a100-calibrated.yaml, h100-calibrated.yaml, "
      "b200-calibrated.yaml (stepsim calibrate fits yours)\n";
  return out;
}

namespace {
// Each attention kernel's speed against the accelerator's own (flash: 1) at head dimension 128, the
// one its `attention` efficiency is measured at; null where it is refused.
nlohmann::ordered_json attention_kernels_json(const AcceleratorSpec& a) {
  nlohmann::ordered_json j;
  for (AttentionKernel k : {AttentionKernel::Flash, AttentionKernel::Flash2, AttentionKernel::Flash3}) {
    if (attention_kernel_refusal(k, a))
      j[attention_name(k)] = nullptr;
    else
      j[attention_name(k)] = {
          {"forward", attention_kernel_speed(k, a.architecture, AttentionPass::Forward, kAttentionReferenceHeadDim)},
          {"backward", attention_kernel_speed(k, a.architecture, AttentionPass::Backward, kAttentionReferenceHeadDim)}};
  }
  return j;
}
}  // namespace

nlohmann::ordered_json presets_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : all_presets()) {
    const AcceleratorSpec& a = c.accelerator;
    const Efficiency& e = a.efficiency;
    list.push_back({{"name", a.name},
                    {"architecture", architecture_name(a.architecture)},
                    {"peak_bf16_flops", a.peak_bf16},
                    {"peak_fp8_flops", a.peak_fp8},
                    {"peak_fp4_flops", a.peak_fp4},
                    {"hbm_bandwidth_bytes_per_s", a.hbm_bandwidth},
                    {"memory_bytes", a.memory},
                    {"usable_memory_bytes", a.usable_memory},
                    {"sms", a.tiling.sms},
                    {"attention_kernels", attention_kernels_json(a)},
                    {"node",
                     {{"gpus", c.node.gpus},
                      {"fabric_bandwidth_bytes_per_s", c.node.fabric_bandwidth},
                      {"pcie_bandwidth_bytes_per_s", c.node.pcie_bandwidth},
                      {"p2p", c.node.p2p},
                      {"fabric_latency_ns", c.node.fabric_latency},
                      {"host_memory_bytes", c.node.host_memory},
                      {"host_memory_bandwidth_bytes_per_s", c.node.host_memory_bandwidth}}},
                    {"network",
                     {{"nics", c.network.nics},
                      {"nic_bandwidth_bytes_per_s", c.network.nic_bandwidth},
                      {"latency_ns", c.network.latency}}},
                    {"efficiency",
                     {{"gemm", e.gemm},
                      {"attention", e.attention},
                      {"memory", e.memory},
                      {"fabric", e.fabric},
                      {"network", e.network},
                      {"contention", e.contention}}}});
  }
  return {{"presets", list}};
}

}  // namespace stepsim::cli
