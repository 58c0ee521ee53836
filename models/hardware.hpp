#pragma once
// Accelerators and hosts: the numbers a plan needs (peak FLOP/s, memory, links).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

struct Accelerator {
  std::string name;
  double peak_bf16_flops = 0;  // dense BF16 tensor FLOP/s
  Bytes memory = 0;            // on the card
  Bytes usable_memory = 0;     // what training may use (driver, context and fragmentation off)
  std::int64_t host_link = 0;  // bytes/s of its host link (PCIe), each direction
  std::int64_t peer_link = 0;  // bytes/s of NVLink-class peer links; 0 = none
  bool p2p = false;            // can cards exchange data without going through host memory
};

struct Host {
  int cards = 8;
  int nics = 8;
  std::int64_t nic_bandwidth = 0;  // bytes/s per NIC
  bool cards_share_nic = false;    // all cards of the host behind one NIC
};

// Built-ins: rtx4090 (165.2 TFLOP/s, 24 GB, 22 GiB usable, PCIe 4.0 x16 32 GB/s, no P2P),
// a100 (312), h100 (989), b200 (~2,250) TFLOP/s BF16 (reference section 4). A job step's preset
// name of the same card is taken too (a100-sxm-80gb, h100-sxm).
const Accelerator* find_accelerator(std::string_view name);
std::vector<std::string> accelerator_names();

}  // namespace stepsim
