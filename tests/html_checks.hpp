#pragma once
// Checks shared by the tests of the pictures (tests/html_report_test.cpp,
// tests/dp_pictures_test.cpp): a strict markup checker, counting, running the CLI.
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

namespace stepsim::test {

// A strict well-formedness check of the markup we emit (stricter than HTML5 needs): every
// element is closed in order, or self-closed, or void; attribute values are quoted; every '&'
// starts one of the entities html_escape writes; element ids are unique. <script> and <style>
// hold raw text up to their closing tag. Returns "" or the first problem.
inline std::string markup_problem(const std::string& html) {
  static const std::set<std::string> kVoid = {"meta", "link", "br", "hr", "img", "input"};
  static const std::vector<std::string> kEntities = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
  std::vector<std::string> open;
  std::set<std::string> ids;
  const auto entity_ok = [&](std::size_t i) {
    for (const auto& e : kEntities)
      if (html.compare(i, e.size(), e) == 0) return true;
    return false;
  };
  std::size_t i = 0;
  while (i < html.size()) {
    if (html[i] == '&') {
      if (!entity_ok(i)) return "bare & at offset " + std::to_string(i);
      ++i;
      continue;
    }
    if (html[i] != '<') {
      ++i;
      continue;
    }
    if (html.compare(i, 9, "<!DOCTYPE") == 0) {
      i = html.find('>', i) + 1;
      continue;
    }
    if (html.compare(i, 4, "<!--") == 0) {
      i = html.find("-->", i) + 3;
      continue;
    }
    const bool closing = html[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    std::string name;
    while (j < html.size() && (std::isalnum(static_cast<unsigned char>(html[j])) || html[j] == '-' || html[j] == ':'))
      name += html[j++];
    if (name.empty()) return "'<' not starting a tag at offset " + std::to_string(i);
    // Attributes up to '>': name="value" pairs.
    bool self_closing = false;
    while (true) {
      while (j < html.size() && std::isspace(static_cast<unsigned char>(html[j]))) ++j;
      if (j >= html.size()) return "unterminated <" + name + ">";
      if (html[j] == '>') {
        ++j;
        break;
      }
      if (html.compare(j, 2, "/>") == 0) {
        self_closing = true;
        j += 2;
        break;
      }
      std::string attr;
      while (j < html.size() && html[j] != '=' && html[j] != '>' && !std::isspace(static_cast<unsigned char>(html[j])))
        attr += html[j++];
      if (html[j] != '=' || html[j + 1] != '"')
        return "attribute '" + attr + "' of <" + name + "> without a quoted value";
      const std::size_t close = html.find('"', j + 2);
      const std::string value = html.substr(j + 2, close - j - 2);
      if (value.find('<') != std::string::npos) return "'<' in attribute " + attr + " of <" + name + ">";
      for (std::size_t k = j + 2; k < close; ++k)
        if (html[k] == '&' && !entity_ok(k)) return "bare & in attribute " + attr;
      if (attr == "id" && !ids.insert(value).second) return "duplicate id " + value;
      j = close + 1;
    }
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">");
      open.pop_back();
    } else if (!self_closing && !kVoid.count(name)) {
      if (name == "script" || name == "style") {
        const std::size_t end = html.find("</" + name + ">", j);
        if (end == std::string::npos) return "unclosed <" + name + ">";
        j = end;
      }
      open.push_back(name);
    }
    i = j;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Runs the CLI; returns its exit status and fills `out` with its stdout.
inline int run_cli(const std::string& args, std::string* out) {
  const std::string cmd = std::string(STEPSIM_BINARY) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  std::size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace stepsim::test
