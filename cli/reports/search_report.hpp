#pragma once
// Reports of a layout search (schedules/lowering/search/layout_search.hpp): the text tables,
// JSON (also the shard file `stepsim search merge` reads), CSV of every simulated layout, and a
// self-contained HTML page with a scatter of every simulated layout, the Pareto front drawn.
#include <string>

#include <nlohmann/json.hpp>

#include "schedules/lowering/search/layout_search.hpp"

namespace stepsim::cli {

struct SearchReportInfo {
  std::string name, description, file;
  std::string shard = "all";  // "I/N" for a shard's results
  double seconds = -1;        // wall time (not in JSON/CSV: outputs stay byte-identical)
  int jobs = 1;
};

std::string search_text(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r);
nlohmann::ordered_json search_json(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r);
std::string search_csv(const SearchSpec& spec, const SearchResult& r);
std::string search_html(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r);

// A simulated layout back from its JSON (shard merging). Throws std::runtime_error.
Evaluated evaluated_from_json(const nlohmann::json& j);
SearchCounts counts_from_json(const nlohmann::json& j);

// The scatter: x = cards (log), y = days (or step time without a task); every layout a dot, the
// front's layouts ringed and joined, the deadline a horizontal line.
std::string search_scatter_svg(const SearchSpec& spec, const SearchResult& r);

}  // namespace stepsim::cli
