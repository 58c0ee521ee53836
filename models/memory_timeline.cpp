#include "models/memory_timeline.hpp"

#include <stdexcept>

#include "sim/engine.hpp"
#include "sim/level.hpp"

namespace stepsim {

std::size_t MemorySequence::add_op(std::string name) {
  ops_.push_back(std::move(name));
  return ops_.size() - 1;
}

void MemorySequence::add_buffer(std::string name, MemoryKind kind, Bytes bytes, std::size_t from_op,
                                std::size_t until_op) {
  if (from_op >= ops_.size() || until_op >= ops_.size() || until_op < from_op)
    throw std::invalid_argument("memory buffer '" + name + "' has an op range outside the sequence");
  buffers_.push_back({std::move(name), kind, bytes, from_op, until_op});
}

MemoryPeak peak_memory(const MemorySequence& seq) {
  MemoryPeak out;
  if (seq.ops().empty()) return out;
  // Unit-length ops in program order: op k runs over [k, k + 1) ns. Only the order matters.
  OpGraph g;
  const ResourceId card = g.add_resource("card");
  std::vector<OpId> ids;
  for (std::size_t k = 0; k < seq.ops().size(); ++k) ids.push_back(g.add_op(card, 1));
  const std::vector<std::string> names = seq.ops();
  g.set_namer([names](OpId op) { return op < names.size() ? names[op] : std::string("?"); });
  const Timeline t = run(g);
  std::vector<Hold> holds;
  for (const auto& b : seq.buffers())
    holds.push_back({0, b.bytes, {ids[b.from_op], OpPoint::Start}, {ids[b.until_op], OpPoint::End}});
  const auto curves = sweep_levels(g, t, holds, 1);
  out.peak = curves[0].peak;
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (t.start[ids[k]] == curves[0].peak_time) {
      out.at_op = k;
      break;
    }
  for (std::size_t i = 0; i < seq.buffers().size(); ++i) {
    const auto& b = seq.buffers()[i];
    if (b.from_op <= out.at_op && out.at_op <= b.until_op && b.bytes != 0) {
      out.live.push_back(i);
      (b.kind == MemoryKind::Resident      ? out.resident
       : b.kind == MemoryKind::Activations ? out.activations
                                           : out.buffers) += b.bytes;
    }
  }
  return out;
}

}  // namespace stepsim
