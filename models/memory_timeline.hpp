#pragma once
// A card's memory over a short sequence of ops: each buffer is live from the start of one op to
// the end of another, and the peak is the maximum over time of what is live at once, not a sum
// of maxima (section 10.1: M_peak = max_t [resident + activations + temporary buffers]).
//
// The ops run back to back on one program-order resource of the simulation kernel (sim/engine),
// and the buffers become sim/level holds, so the peak obeys the kernel's rule: a buffer freed at
// the end of one op and a buffer allocated at the start of the next never overlap.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

enum class MemoryKind { Resident, Activations, Buffers };

struct LiveBuffer {
  std::string name;
  MemoryKind kind = MemoryKind::Buffers;
  Bytes bytes = 0;
  std::size_t from_op = 0;   // live from this op's start ...
  std::size_t until_op = 0;  // ... to this op's end (inclusive)
};

class MemorySequence {
 public:
  std::size_t add_op(std::string name);
  // Throws std::invalid_argument if an op index is out of range or until < from.
  void add_buffer(std::string name, MemoryKind kind, Bytes bytes, std::size_t from_op, std::size_t until_op);
  std::size_t last_op() const { return ops_.empty() ? 0 : ops_.size() - 1; }

  const std::vector<std::string>& ops() const { return ops_; }
  const std::vector<LiveBuffer>& buffers() const { return buffers_; }

 private:
  std::vector<std::string> ops_;
  std::vector<LiveBuffer> buffers_;
};

struct MemoryPeak {
  Bytes peak = 0;
  std::size_t at_op = 0;                             // the first op at whose start the peak is reached
  std::vector<std::size_t> live;                     // indices of the buffers live at the peak
  Bytes resident = 0, activations = 0, buffers = 0;  // the peak by kind
};

MemoryPeak peak_memory(const MemorySequence& seq);

}  // namespace stepsim
