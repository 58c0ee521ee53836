#include "sim/critical_path.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/graph/compressed_sparse_row_graph.hpp>

namespace stepsim {

std::vector<CriticalStep> critical_path(const OpGraph& g, const Timeline& t) {
  const auto n = static_cast<OpId>(g.op_count());
  if (n == 0) return {};
  if (!g.finalized()) throw std::logic_error("critical_path: the graph is not finalized");
  if (t.start.size() != n) throw std::logic_error("critical_path: timeline of another graph");

  // Walking backwards needs each op's dependencies (in-edges): a bidirectional Boost CSR over
  // the dependency edges gives them.
  using Bidi = boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property, boost::no_property,
                                                  boost::no_property, OpId, OpId>;
  std::vector<std::pair<OpId, OpId>> edges;
  edges.reserve(g.dep_count());
  for (OpId u = 0; u < n; ++u) g.for_each_successor(u, [&](OpId v) { edges.emplace_back(u, v); });
  const Bidi deps(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);
  edges.clear();
  edges.shrink_to_fit();

  // The op that held each op's resource until it could start: on a program-order resource the
  // op before it in program order; on a FIFO resource the op that started before it and ran
  // longest (capacity one: only zero-length ops share a start, and those hold nothing). The
  // engine serves zero-length FIFO ops sharing a start in offer rounds the timeline does not
  // record; taking one of them as "before" could link an op to one that waited for it.
  std::vector<OpId> before(n, kNoOp);
  std::vector<std::vector<OpId>> fifo(g.resource_count());
  for (ResourceId r = 0; r < g.resource_count(); ++r) {
    if (g.resource(r).discipline == Discipline::Fifo) continue;
    for (OpId prev = kNoOp, op = g.first_on(r); op != kNoOp; prev = op, op = g.next_on_resource(op)) before[op] = prev;
  }
  for (OpId op = 0; op < n; ++op)
    if (g.resource(g.op_resource(op)).discipline == Discipline::Fifo) fifo[g.op_resource(op)].push_back(op);
  for (auto& ops : fifo) {
    std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) {
      if (t.start[a] != t.start[b]) return t.start[a] < t.start[b];
      if (t.end(g, a) != t.end(g, b)) return t.end(g, a) < t.end(g, b);
      return a < b;
    });
    OpId held = kNoOp;  // the last op of the previous start time: the longest of those
    for (std::size_t i = 1; i < ops.size(); ++i) {
      if (t.start[ops[i - 1]] < t.start[ops[i]]) held = ops[i - 1];
      before[ops[i]] = held;
    }
  }

  OpId last = 0;
  for (OpId op = 1; op < n; ++op)
    if (t.done(g, op) > t.done(g, last)) last = op;

  std::vector<CriticalStep> chain;
  for (OpId v = last;;) {
    const Time s = t.start[v];
    OpId dep = kNoOp;
    for (auto [it, end] = boost::in_edges(v, deps); it != end; ++it) {
      const auto u = static_cast<OpId>(boost::source(*it, deps));
      if (t.done(g, u) == s && u < dep) dep = u;
    }
    if (dep != kNoOp) {
      chain.push_back({v, CriticalStep::Why::Dependency});
      v = dep;
    } else if (before[v] != kNoOp && t.end(g, before[v]) == s) {
      chain.push_back({v, CriticalStep::Why::Resource});
      v = before[v];
    } else {
      chain.push_back({v, CriticalStep::Why::Start});
      break;
    }
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

}  // namespace stepsim
