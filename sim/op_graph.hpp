#pragma once
// OpGraph: the work of one simulation as a DAG of ops on resources.
//
// The kernel knows only resources, ops, durations and dependencies; what an op *means*
// (a forward pass, a gradient transfer) lives in the model that built the graph, which can
// give the graph a namer so that errors and traces speak its language.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

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
};

// Thrown for a graph that can never run: a dependency cycle, a dangling op id.
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OpGraph {
 public:
  using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                 boost::no_property, boost::no_property,
                                                 OpId, OpId>;
  using Namer = std::function<std::string(OpId)>;

  ResourceId add_resource(std::string name, Discipline discipline = Discipline::ProgramOrder);

  // Adds an op that occupies `resource` for `duration` and becomes visible to its successors
  // `latency` after it ends (a link's propagation delay). It is appended to the resource's
  // program order.
  OpId add_op(ResourceId resource, Time duration, Time latency = 0);

  // `after` may not start before `before` is done (ended plus its latency).
  void add_dep(OpId before, OpId after);

  // Builds the dependency graph (Boost CSR) and checks it is acyclic; throws GraphError naming
  // the ops of one cycle. Must be called once, after the last add_*.
  void finalize();

  void set_namer(Namer namer) { namer_ = std::move(namer); }
  std::string op_name(OpId op) const;

  std::size_t op_count() const { return resource_.size(); }
  std::size_t resource_count() const { return resources_.size(); }
  std::size_t dep_count() const { return edges_.empty() ? boost::num_edges(csr_) : edges_.size(); }
  const Resource& resource(ResourceId r) const { return resources_[r]; }
  ResourceId op_resource(OpId op) const { return resource_[op]; }
  Time op_duration(OpId op) const { return duration_[op]; }
  Time op_latency(OpId op) const { return latency_[op]; }

  // Program order: the first op of a resource, and the op after `op` on its resource.
  OpId first_on(ResourceId r) const { return first_[r]; }
  OpId next_on_resource(OpId op) const { return next_[op]; }

  const Csr& deps() const { return csr_; }
  // Calls f(successor) for each op that depends on `op` (after finalize()).
  template <class F>
  void for_each_successor(OpId op, F&& f) const {
    auto [begin, end] = boost::out_edges(op, csr_);
    for (auto it = begin; it != end; ++it) f(static_cast<OpId>(boost::target(*it, csr_)));
  }
  std::uint32_t in_degree(OpId op) const { return in_degree_[op]; }

 private:
  bool has_cycle() const;

  std::vector<Resource> resources_;
  std::vector<OpId> first_, last_;  // per resource
  // Structure of arrays, indexed by op id.
  std::vector<ResourceId> resource_;
  std::vector<Time> duration_, latency_;
  std::vector<OpId> next_;
  std::vector<std::uint32_t> in_degree_;
  std::vector<std::pair<OpId, OpId>> edges_;  // until finalize()
  Csr csr_;
  Namer namer_;
  bool finalized_ = false;
};

}  // namespace stepsim
