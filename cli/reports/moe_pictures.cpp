#include "cli/reports/moe_pictures.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/reports/timeline_pages.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

enum Swatches { kExpert, kDispatch, kCombine };

std::string when(Time start, Time end) {
  return fmt::format("{} to {} ({})", format_duration(start), format_duration(end), format_duration(end - start));
}

std::vector<TitledTimeline> timelines(const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs) {
  Time axis_end = 0;
  for (const auto& [name, run] : runs) axis_end = std::max(axis_end, run->stats.layer);
  std::vector<TitledTimeline> out;
  for (const auto& [name, run] : runs)
    out.push_back({fmt::format("{}: layer {}, busiest card {} ({:.2f}x the mean rows)", name,
                               format_duration(run->stats.layer), run->stats.busiest_card, run->stats.imbalance),
                   "", moe_timeline(*run), axis_end});
  return out;
}

const char* kHowToRead =
    "Per card its compute stream (one bar per local expert, the expert id on it) and below it its link: the dispatch "
    "all-to-all share, then the combine share. A card idle between its last expert and the combine waits for the "
    "busiest "
    "card.";

}  // namespace

TimelineChart moe_timeline(const MoeLayerRun& run) {
  const MoeLayerProgram& p = *run.program;
  const Timeline& tl = run.timeline;
  TimelineChart chart;
  chart.legend = {{"expert compute", "#4e79a7", 'E'},
                  {"dispatch (all-to-all)", "#76b7b2", 'D'},
                  {"combine (all-to-all)", "#edc948", 'C'}};
  chart.end = run.stats.layer;
  for (int c = 0; c < run.spec.cards; ++c) {
    TimeTrack compute{fmt::format("card {}", c), {}, false, true, {}};
    for (OpId op : p.expert_ops[static_cast<std::size_t>(c)]) {
      const int e = p.op_expert[op];
      compute.bars.push_back(
          {tl.start[op], tl.end(p.graph, op), kExpert, fmt::format("{}", e),
           fmt::format("card {}: expert {}, {} rows computed ({} routed), {}", c, e, run.loads.computed[e],
                       run.loads.routed[e], when(tl.start[op], tl.end(p.graph, op)))});
    }
    TimeTrack link{fmt::format("card {} link", c), {}, true, false, {}};
    const auto& tf = p.traffic[static_cast<std::size_t>(c)];
    const OpId d = p.dispatch[static_cast<std::size_t>(c)], k = p.combine[static_cast<std::size_t>(c)];
    link.bars.push_back({tl.start[d], tl.end(p.graph, d), kDispatch, "",
                         fmt::format("card {}: dispatch, {} rows sent, {} received, {}", c, tf.rows_sent,
                                     tf.rows_received, when(tl.start[d], tl.end(p.graph, d)))});
    link.bars.push_back({tl.start[k], tl.end(p.graph, k), kCombine, "",
                         fmt::format("card {}: combine, {} rows sent, {} received, {}", c, tf.rows_received,
                                     tf.rows_sent, when(tl.start[k], tl.end(p.graph, k)))});
    sort_bars(compute);
    sort_bars(link);
    chart.tracks.push_back(std::move(compute));
    chart.tracks.push_back(std::move(link));
  }
  return chart;
}

std::string moe_html_report(const std::string& title, const std::string& description, const std::string& text_report,
                            const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs) {
  return timeline_html_report(title, description, text_report, kHowToRead, timelines(runs));
}

std::string moe_gantt_text(const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs, int width) {
  return timeline_gantt_text(
      timelines(runs), width,
      "A bar reads as its letter, its expert id if it fits, then lower case; an op shorter than a "
      "cell still takes one.");
}

}  // namespace stepsim::cli
