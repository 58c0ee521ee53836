#include "cli/reports/trace_writer.hpp"

#include <stdexcept>

#include "cli/reports/chrome_trace.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/perfetto_trace.hpp"

namespace stepsim::cli {

TraceFormat trace_format_of(std::string_view path) {
  for (const std::string_view ext : {".pftrace", ".perfetto-trace", ".pb"})
    if (path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext) return TraceFormat::Perfetto;
  return TraceFormat::ChromeJson;
}

std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format, std::FILE* out) {
  if (format == TraceFormat::Perfetto) return std::make_unique<PerfettoTrace>(out);
  return std::make_unique<ChromeTrace>(out);
}

void write_trace_file(const std::string& path, const TraceEmitter& emit) {
  OutputFile file(path);
  const auto writer = make_trace_writer(trace_format_of(path), file.get());
  emit(*writer);
  try {
    writer->finish();
  } catch (const std::runtime_error&) { file.fail(writer->write_errno()); }
  file.commit();
}

std::string chrome_trace_text(const TraceEmitter& emit) {
  ChromeTrace trace;
  emit(trace);
  return trace.finish();
}

}  // namespace stepsim::cli
