#include "sim/op_graph.hpp"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/depth_first_search.hpp>

namespace stepsim {

namespace {
std::atomic<std::size_t> g_op_limit{0};
}  // namespace

void set_op_limit(std::size_t ops) { g_op_limit = ops; }
std::size_t op_limit() { return g_op_limit; }

void OpGraph::reserve(std::size_t ops, std::size_t deps) {
  if (op_limit_ != 0 && ops > op_limit_)
    throw OpLimitError(fmt::format("more than {} ops in one simulated graph", op_limit_));
  rec_.reserve(ops + 1);  // + the sentinel finalize() appends
  edges_.reserve(deps);
}

ResourceId OpGraph::add_resource(std::string name, Discipline discipline, Time latency) {
  if (resources_.size() >= kNoOp) throw GraphError("too many resources");
  if (latency < 0) throw GraphError("resource with negative latency");
  resources_.push_back({std::move(name), discipline, latency});
  first_.push_back(kNoOp);
  last_.push_back(kNoOp);
  busy_.push_back(0);
  return static_cast<ResourceId>(resources_.size() - 1);
}

void OpGraph::reject_op(ResourceId resource, Time duration) const {
  if (finalized_) throw GraphError("op added after finalize");
  if (resource >= resources_.size()) throw GraphError(fmt::format("op on unknown resource {}", resource));
  if (duration < 0) throw GraphError("op with negative duration");
  if (n_ + 1 >= kNoOp) throw GraphError("too many ops (at most 2^32 - 2)");
  throw OpLimitError(fmt::format("more than {} ops in one simulated graph", op_limit_));
}

void OpGraph::reject_dep(OpId before, OpId after) const {
  if (before >= n_ || after >= n_)
    throw GraphError(fmt::format("dependency between unknown ops {} -> {}", before, after));
  if (before == after) throw GraphError(fmt::format("op {} depends on itself", op_name(before)));
  if (finalized_) throw GraphError("dependency added after finalize");
  throw GraphError("too many dependencies (at most 2^32 - 1)");
}

std::string OpGraph::op_name(OpId op) const {
  if (namer_) return namer_(op);
  return fmt::format("op#{}", op);
}

// Kahn's algorithm: the graph is acyclic iff repeatedly removing ops with no unremoved
// predecessor removes them all. Plain arrays, so it costs a fraction of a depth-first search.
bool OpGraph::has_cycle() const {
  std::vector<std::uint32_t> left = in_degrees();
  std::vector<OpId> free;
  for (OpId op = 0; op < n_; ++op)
    if (left[op] == 0) free.push_back(op);
  std::size_t removed = 0;
  while (!free.empty()) {
    const OpId u = free.back();
    free.pop_back();
    ++removed;
    for_each_successor(u, [&](OpId v) {
      if (--left[v] == 0) free.push_back(v);
    });
  }
  return removed != n_;
}

void OpGraph::finalize() {
  if (finalized_) return;
  // CSR by a counting sort of the edges on their source: count, turn the counts into end
  // offsets, then place the edges from last to first, moving each source's offset down to its
  // start. Each list keeps the order its edges were added in. The offsets are counted in an array
  // of their own (4 bytes an op, not the records' 20), so that the two passes' scattered updates
  // stay in cache; they are copied into the records at the end.
  std::vector<std::uint32_t> offset(n_ + 1, 0);
  for (const auto& e : edges_) ++offset[e.first];
  std::uint32_t sum = 0;
  for (std::uint32_t& o : offset) o = sum += o;
  targets_.resize(edges_.size());
  for (auto e = edges_.rbegin(); e != edges_.rend(); ++e) targets_[--offset[e->first]] = e->second;
  rec_.push_back({0, 0, kNoOp, 0});  // sentinel
  for (std::size_t op = 0; op <= n_; ++op) rec_[op].first_succ = offset[op];
  edges_.clear();
  edges_.shrink_to_fit();
  finalized_ = true;
}

std::vector<std::uint32_t> OpGraph::in_degrees() const {
  std::vector<std::uint32_t> in(n_, 0);
  for (const OpId v : targets_) ++in[v];
  return in;
}

// Acyclicity is not checked here but by the engine, which is a topological traversal itself: a
// run that cannot finish checks for a cycle first (check_acyclic), so the error names the cycle.
void OpGraph::check_acyclic() const {
  if (has_cycle()) throw_cycle();
}

namespace {
// Records the first back edge found by DFS: that edge closes a cycle.
struct CycleFinder : boost::default_dfs_visitor {
  std::vector<OpId>* parent;
  std::pair<OpId, OpId>* back;
  bool* found;
  template <class Edge, class G>
  void back_edge(Edge e, const G& g) {
    if (!*found) {
      *back = {static_cast<OpId>(boost::source(e, g)), static_cast<OpId>(boost::target(e, g))};
      *found = true;
    }
  }
  template <class Edge, class G>
  void tree_edge(Edge e, const G& g) {
    (*parent)[boost::target(e, g)] = static_cast<OpId>(boost::source(e, g));
  }
};
}  // namespace

// Error path: a depth-first search (Boost) over the successor lists finds one cycle to name.
void OpGraph::throw_cycle() const {
  using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                 boost::no_property, OpId, OpId>;
  const auto n = static_cast<OpId>(n_);
  std::vector<std::pair<OpId, OpId>> edges;
  edges.reserve(targets_.size());
  for (OpId u = 0; u < n; ++u) for_each_successor(u, [&](OpId v) { edges.emplace_back(u, v); });
  const Csr csr(boost::edges_are_sorted, edges.begin(), edges.end(), n);
  std::vector<OpId> parent(n, kNoOp);
  std::pair<OpId, OpId> back{};
  bool found = false;
  CycleFinder vis;
  vis.parent = &parent;
  vis.back = &back;
  vis.found = &found;
  std::vector<boost::default_color_type> color(n);
  boost::depth_first_search(csr, boost::visitor(vis).color_map(boost::make_iterator_property_map(
                                     color.begin(), boost::get(boost::vertex_index, csr))));
  if (!found) throw GraphError("dependency cycle");
  // back = (u, v): v is an ancestor of u in the DFS tree; walk u's parents up to v.
  std::vector<OpId> cycle{back.first};
  for (OpId x = back.first; x != back.second && parent[x] != kNoOp; x = parent[x]) cycle.push_back(parent[x]);
  std::reverse(cycle.begin(), cycle.end());
  // Named up to a point: a cycle through a large graph can run to thousands of ops, and the error
  // is one line; its first ops show where the waits close.
  constexpr std::size_t kNamed = 6;
  std::string text;
  for (std::size_t k = 0; k < std::min(cycle.size(), kNamed); ++k) text += op_name(cycle[k]) + " -> ";
  if (cycle.size() > kNamed)
    text += fmt::format("... ({} ops in the cycle)", cycle.size());
  else
    text += op_name(cycle.front());
  throw GraphError("dependency cycle: " + text);
}

}  // namespace stepsim
