#include "cli/reports/plan_tensor_report.hpp"
#include "cli/reports/quantities.hpp"

#include <fmt/format.h>

#include "cli/reports/table.hpp"
#include "models/kv_cache.hpp"
#include "models/resharding.hpp"

namespace stepsim::cli {

namespace {

std::string mib_text(Bytes b) { return fmt::format("{:g}", mib(b)); }

}  // namespace

CaptionedTable reshard_table(const ReshardQuestion& q) {
  const StateFormat& f = q.format;
  const Bytes row_weights = q.cols * f.weights;
  const Bytes row_checkpoint = checkpoint_tensor_bytes(q.cols, f);
  std::string out =
      fmt::format("resharding {} [{}, {}] from TP{} to TP{} (split by rows)\n", q.tensor, q.rows, q.cols, q.from, q.to);
  out += fmt::format(
      "weights {} MiB at {} B each; in a checkpoint {} MiB ({} B per parameter: weights {}, master {}, "
      "moments {} + {})\n",
      mib_text(q.rows * row_weights), f.weights, mib_text(q.rows * row_checkpoint), f.recoverable(), f.weights,
      f.master, f.moment1, f.moment2);
  const RowRange old0 = shard_rows(q.rows, q.from, 0), new0 = shard_rows(q.rows, q.to, 0);
  out += fmt::format("old shard {} rows ({} MiB of weights); new shard {} rows ({} MiB)", comma_grouped(old0.count),
                     mib_text(old0.count * row_weights), comma_grouped(new0.count), mib_text(new0.count * row_weights));
  Table t({{"new rank"}, {"reads old shard"}, {"its rows", false}, {"rows"}, {"weights MiB"}, {"checkpoint MiB"}});
  for (const ShardRead& r : reshard_reads(q.rows, q.from, q.to))
    t.add_row({std::to_string(r.new_rank), std::to_string(r.old_rank),
               fmt::format("{}-{}", r.old_offset, r.old_offset + r.rows - 1), comma_grouped(r.rows),
               mib_text(r.rows * row_weights), mib_text(r.rows * row_checkpoint)});
  return {std::move(out), std::move(t), ""};
}

nlohmann::ordered_json reshard_json(const ReshardQuestion& q) {
  nlohmann::ordered_json reads = nlohmann::ordered_json::array();
  for (const ShardRead& r : reshard_reads(q.rows, q.from, q.to))
    reads.push_back({{"new_rank", r.new_rank},
                     {"old_rank", r.old_rank},
                     {"old_offset", r.old_offset},
                     {"new_offset", r.new_offset},
                     {"rows", r.rows}});
  return {{"tensor", q.tensor},
          {"shape", {q.rows, q.cols}},
          {"from", q.from},
          {"to", q.to},
          {"weights_bytes", q.rows * q.cols * q.format.weights},
          {"checkpoint_bytes", checkpoint_tensor_bytes(q.rows * q.cols, q.format)},
          {"reads", reads}};
}

CaptionedTable kv_cache_table(const KvCacheQuestion& q) {
  const TransformerConfig& m = q.model;
  std::string out = fmt::format("KV cache of one sequence ({}): 2 x {} layers x {} KV heads x {} x tokens x {} B",
                                m.name.empty() ? "model" : m.name, m.layers, m.kv_heads, m.head_dim, q.bytes);
  Table t({{"tokens"}, {"bytes"}, {"GiB"}});
  for (std::int64_t n : q.tokens) {
    const Bytes b = kv_cache_bytes(m, n, q.bytes);
    t.add_row({comma_grouped(n), comma_grouped(b), fmt::format("{:.3f}", static_cast<double>(b) / kGiB)});
  }
  return {std::move(out), std::move(t), ""};
}

nlohmann::ordered_json kv_cache_json(const KvCacheQuestion& q) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::int64_t n : q.tokens) rows.push_back({{"tokens", n}, {"bytes", kv_cache_bytes(q.model, n, q.bytes)}});
  return {{"model", q.model.name}, {"bytes_per_element", q.bytes}, {"sequences", rows}};
}

}  // namespace stepsim::cli
