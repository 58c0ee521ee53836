#pragma once
// OpGraph: the work of one simulation as a DAG of ops on resources.
//
// The kernel knows only resources, ops, durations and dependencies; what an op *means*
// (a forward pass, a gradient transfer) lives in the model that built the graph, which can
// give the graph a namer so that errors and traces speak its language.
//
// Storage is laid out for the engine, which reads it in place (no copy): one 20-byte record per
// op (everything the event loop touches for that op; its latency is its resource's) and the
// successor lists as flat CSR arrays built once by finalize(). Boost.Graph is used only where a
// graph library earns its keep: naming the ops of a cycle, and critical paths
// (sim/critical_path.hpp).
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

using OpId = std::uint32_t;
using ResourceId = std::uint32_t;
inline constexpr OpId kNoOp = ~OpId{0};

// How a resource picks its next op among those whose inputs are ready.
enum class Discipline : std::uint8_t {
  // Ops run in the order they were added to the resource (a compute stream running a
  // schedule's action list). The next op waits even if a later one is ready.
  ProgramOrder,
  // Ops run in order of readiness (a link serving requests): earliest ready time first,
  // ties broken by lower op id.
  Fifo,
};

struct Resource {
  std::string name;
  Discipline discipline = Discipline::ProgramOrder;
  // What an op's result takes to reach its successors after the op frees the resource (a link's
  // propagation delay); the same for every op on the resource.
  Time latency = 0;
};

// Thrown for a graph that can never run: a dependency cycle, a dangling op id.
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A graph that passes the op limit (set_op_limit): more work than the run may take. The
// command line sets the limit from --max-ops / --max-memory, so that a scenario no estimate
// caught still stops before it allocates without bound.
class OpLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The most ops one graph may hold, for every graph of the process (0: no limit).
void set_op_limit(std::size_t ops);
std::size_t op_limit();

class OpGraph {
 public:
  using Namer = std::function<std::string(OpId)>;

  // What the engine reads of an op: 20 bytes, as a large step holds one per op (the latency is
  // its resource's; the dependency counts are the engine's to make from the successor lists).
  // Packed to 4-byte alignment: an 8-byte duration at a 4-byte boundary costs x86 and ARMv8
  // nothing, and the records of a 16-million-op step take 330 MB instead of 400.
#pragma pack(push, 4)
  struct OpRecord {
    Time duration;
    ResourceId resource;
    OpId next;                 // program order on its resource
    std::uint32_t first_succ;  // successors: targets()[first_succ .. next record's first_succ)
  };
#pragma pack(pop)
  static_assert(sizeof(OpRecord) == 20);

  // Optional: room for this many ops and dependencies, so that the arrays grow once.
  void reserve(std::size_t ops, std::size_t deps);

  // A resource whose ops' results reach their successors `latency` after they end (a link's
  // propagation delay; 0 for a compute stream).
  ResourceId add_resource(std::string name, Discipline discipline = Discipline::ProgramOrder, Time latency = 0);

  // Adds an op that occupies `resource` for `duration`; it is appended to the resource's program
  // order. Inline, with the errors out of line: a lowering adds one per op, and the call and
  // its checks were 7 % of a whole run's instructions.
  OpId add_op(ResourceId resource, Time duration) {
    if (finalized_ || resource >= resources_.size() || duration < 0 || n_ + 1 >= kNoOp ||
        (op_limit_ != 0 && n_ >= op_limit_)) [[unlikely]]
      reject_op(resource, duration);
    const auto id = static_cast<OpId>(n_++);
    rec_.push_back({duration, resource, kNoOp, 0});
    if (__builtin_add_overflow(busy_[resource], duration, &busy_[resource])) [[unlikely]]
      busy_[resource] = std::numeric_limits<Time>::max();
    if (last_[resource] == kNoOp)
      first_[resource] = id;
    else
      rec_[last_[resource]].next = id;
    last_[resource] = id;
    return id;
  }

  // `after` may not start before `before` is done (ended plus its latency).
  void add_dep(OpId before, OpId after) {
    if (before >= n_ || after >= n_ || before == after || finalized_ || edges_.size() >= 0xffffffffu) [[unlikely]]
      reject_dep(before, after);
    edges_.emplace_back(before, after);
  }

  // Builds the successor lists (CSR). Must be called once, after the last add_*. (run() calls
  // it.) Acyclicity is checked by run(): a graph with a cycle cannot finish, and run() then
  // throws GraphError naming the ops of one cycle.
  void finalize();
  // Throws GraphError naming the ops of one cycle, if there is one (after finalize()).
  void check_acyclic() const;
  bool finalized() const { return finalized_; }

  void set_namer(Namer namer) { namer_ = std::move(namer); }
  std::string op_name(OpId op) const;

  std::size_t op_count() const { return n_; }
  std::size_t resource_count() const { return resources_.size(); }
  std::size_t dep_count() const { return finalized_ ? targets_.size() : edges_.size(); }
  const Resource& resource(ResourceId r) const { return resources_[r]; }
  ResourceId op_resource(OpId op) const { return rec_[op].resource; }
  Time op_duration(OpId op) const { return rec_[op].duration; }
  Time op_latency(OpId op) const { return resources_[rec_[op].resource].latency; }

  // The sum of the durations of a resource's ops: the time it serves them, as it never overlaps
  // itself (kept as ops are added, so that no report walks the ops for it; saturates at the
  // largest Time, which no run reaches: the engine refuses a step that long).
  Time busy(ResourceId r) const { return busy_[r]; }
  // Program order: the first op of a resource, and the op after `op` on its resource.
  OpId first_on(ResourceId r) const { return first_[r]; }
  OpId next_on_resource(OpId op) const { return rec_[op].next; }

  // After finalize(): the records (op_count() + 1 of them: the last is a sentinel whose
  // first_succ closes the last list) and the successor targets.
  std::span<const OpRecord> records() const { return {rec_.data(), rec_.size()}; }
  std::span<const OpId> targets() const { return {targets_.data(), targets_.size()}; }

  // Calls f(successor) for each op that depends on `op` (after finalize()).
  template <class F>
  void for_each_successor(OpId op, F&& f) const {
    for (std::uint32_t i = rec_[op].first_succ, last = rec_[op + 1].first_succ; i < last; ++i) f(targets_[i]);
  }
  // Per op, how many ops it depends on (after finalize(); counted from the successor lists).
  std::vector<std::uint32_t> in_degrees() const;

 private:
  bool has_cycle() const;
  [[noreturn]] void throw_cycle() const;
  // The error of the first check add_op / add_dep failed.
  [[noreturn, gnu::cold]] void reject_op(ResourceId resource, Time duration) const;
  [[noreturn, gnu::cold]] void reject_dep(OpId before, OpId after) const;

  std::vector<Resource> resources_;
  std::vector<OpId> first_, last_;            // per resource
  std::vector<Time> busy_;                    // per resource
  std::vector<OpRecord> rec_;                 // per op (+ the sentinel after finalize)
  std::vector<OpId> targets_;                 // successor lists, in op order (after finalize)
  std::vector<std::pair<OpId, OpId>> edges_;  // until finalize()
  std::size_t n_ = 0;
  std::size_t op_limit_ = op_limit();  // the process's limit when the graph was made
  Namer namer_;
  bool finalized_ = false;
};

}  // namespace stepsim
