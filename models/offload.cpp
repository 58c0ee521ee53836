#include "models/offload.hpp"

namespace stepsim {

double offload_break_even_bandwidth(double cpu_memory_bandwidth, double gpu_memory_bandwidth) {
  return 1.0 / (3.0 * (1.0 / cpu_memory_bandwidth - 1.0 / gpu_memory_bandwidth));
}

ConversionPlace conversion_times(Bytes bf16_gradient, std::int64_t link, std::int64_t cpu_memory_bandwidth,
                                 std::int64_t gpu_memory_bandwidth) {
  ConversionPlace p;
  p.on_cpu = transfer_time(bf16_gradient, link) + transfer_time(3 * bf16_gradient, cpu_memory_bandwidth);
  p.on_gpu = transfer_time(3 * bf16_gradient, gpu_memory_bandwidth) + transfer_time(2 * bf16_gradient, link);
  return p;
}

MemorySequence gpu_conversion_sequence(Bytes bf16_gradient) {
  MemorySequence s;
  const auto produce = s.add_op("backward produces the BF16 gradient");
  const auto convert = s.add_op("convert to FP32 on the GPU");
  const auto send = s.add_op("send FP32 to the host");
  s.add_buffer("BF16 gradient", MemoryKind::Buffers, bf16_gradient, produce, convert);
  s.add_buffer("FP32 gradient", MemoryKind::Buffers, 2 * bf16_gradient, convert, send);
  return s;
}

}  // namespace stepsim
