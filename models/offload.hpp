#pragma once
// Where to convert a BF16 gradient to FP32 when the optimizer runs on the host (section 10.2.3,
// figures 10-14/10-15). Converting G bytes of BF16 reads G and writes 2G: 3G bytes of memory
// traffic, bound by memory bandwidth (GPU Cg, CPU Cc).
//   convert on the CPU: send G over the link (bandwidth B), then 3G / Cc
//   convert on the GPU: 3G / Cg, then send 2G
// Equal when G / B = 3G (1/Cc - 1/Cg): the break-even link bandwidth B* = 1 / (3 (1/Cc - 1/Cg)).
// Below B* the link is the scarcer resource: send BF16 and convert on the CPU.
#include <cstdint>

#include "models/memory_timeline.hpp"
#include "sim/time.hpp"

namespace stepsim {

double offload_break_even_bandwidth(double cpu_memory_bandwidth, double gpu_memory_bandwidth);

struct ConversionPlace {
  Time on_cpu = 0;  // send BF16, convert on the host
  Time on_gpu = 0;  // convert on the card, send FP32
};
ConversionPlace conversion_times(Bytes bf16_gradient, std::int64_t link, std::int64_t cpu_memory_bandwidth,
                                 std::int64_t gpu_memory_bandwidth);

// The card's memory while converting a BF16 gradient on the GPU: the BF16 input and the FP32
// output live at once (peak 3G; 2G more than the gradient itself).
MemorySequence gpu_conversion_sequence(Bytes bf16_gradient);

}  // namespace stepsim
