#include "sim/op_graph.hpp"

#include <algorithm>

#include <boost/graph/depth_first_search.hpp>
#include <fmt/format.h>

namespace stepsim {

ResourceId OpGraph::add_resource(std::string name, Discipline discipline) {
  resources_.push_back({std::move(name), discipline});
  first_.push_back(kNoOp);
  last_.push_back(kNoOp);
  return static_cast<ResourceId>(resources_.size() - 1);
}

OpId OpGraph::add_op(ResourceId resource, Time duration, Time latency) {
  if (resource >= resources_.size()) throw GraphError(fmt::format("op on unknown resource {}", resource));
  if (duration < 0 || latency < 0) throw GraphError("op with negative duration or latency");
  const auto id = static_cast<OpId>(resource_.size());
  resource_.push_back(resource);
  duration_.push_back(duration);
  latency_.push_back(latency);
  next_.push_back(kNoOp);
  if (last_[resource] == kNoOp) first_[resource] = id; else next_[last_[resource]] = id;
  last_[resource] = id;
  return id;
}

void OpGraph::add_dep(OpId before, OpId after) {
  if (before >= op_count() || after >= op_count())
    throw GraphError(fmt::format("dependency between unknown ops {} -> {}", before, after));
  if (before == after) throw GraphError(fmt::format("op {} depends on itself", op_name(before)));
  edges_.emplace_back(before, after);
}

std::string OpGraph::op_name(OpId op) const {
  if (namer_) return namer_(op);
  return fmt::format("op#{}", op);
}

namespace {
// Records the first back edge found by DFS: that edge closes a cycle.
struct CycleFinder : boost::default_dfs_visitor {
  std::vector<OpId>* parent;
  std::pair<OpId, OpId>* back;
  bool* found;
  template <class Edge, class G>
  void back_edge(Edge e, const G& g) {
    if (!*found) { *back = {static_cast<OpId>(boost::source(e, g)), static_cast<OpId>(boost::target(e, g))}; *found = true; }
  }
  template <class Edge, class G>
  void tree_edge(Edge e, const G& g) { (*parent)[boost::target(e, g)] = static_cast<OpId>(boost::source(e, g)); }
};
}  // namespace

// Kahn's algorithm: the graph is acyclic iff repeatedly removing ops with no unremoved
// predecessor removes them all. Plain arrays, so it costs a fraction of a depth-first search.
bool OpGraph::has_cycle() const {
  const auto n = static_cast<OpId>(op_count());
  std::vector<std::uint32_t> left = in_degree_;
  std::vector<OpId> free;
  for (OpId op = 0; op < n; ++op)
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
  return removed != n;
}

void OpGraph::finalize() {
  if (finalized_) return;
  const auto n = static_cast<OpId>(op_count());
  in_degree_.assign(n, 0);
  for (const auto& e : edges_) ++in_degree_[e.second];
  csr_ = Csr(boost::edges_are_unsorted_multi_pass, edges_.begin(), edges_.end(), n);
  edges_.clear();
  edges_.shrink_to_fit();
  if (!has_cycle()) {
    finalized_ = true;
    return;
  }

  // Error path: a depth-first search finds one cycle to name.
  std::vector<OpId> parent(n, kNoOp);
  std::pair<OpId, OpId> back{};
  bool found = false;
  CycleFinder vis;
  vis.parent = &parent;
  vis.back = &back;
  vis.found = &found;
  std::vector<boost::default_color_type> color(n);
  boost::depth_first_search(csr_, boost::visitor(vis).color_map(
      boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, csr_))));
  if (found) {
    // back = (u, v): v is an ancestor of u in the DFS tree; walk u's parents up to v.
    std::vector<OpId> cycle{back.first};
    for (OpId x = back.first; x != back.second && parent[x] != kNoOp; x = parent[x]) cycle.push_back(parent[x]);
    std::reverse(cycle.begin(), cycle.end());
    std::string text;
    for (OpId op : cycle) text += op_name(op) + " -> ";
    text += op_name(cycle.front());
    throw GraphError("dependency cycle: " + text);
  }
  finalized_ = true;
}

}  // namespace stepsim
