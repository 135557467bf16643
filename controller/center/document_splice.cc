#include "controller/center/document_splice.h"

#include <algorithm>
#include <climits>

namespace portico::controller {
namespace {

// SplitLines splits `text` after each '\n' (the last line may lack one).
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    size_t len = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(0, len));
    text.remove_prefix(len);
  }
  return lines;
}

// IsMarker: a "---" document marker at column 0.
bool IsMarker(std::string_view line) {
  if (!line.starts_with("---")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' ||
         line[3] == '\n';
}

// IsBare: a marker line with nothing after the marker but blanks.
bool IsBare(std::string_view line) {
  for (char c : line.substr(3)) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

struct Region {
  int begin;  // first line replaced, 1-based
  int end;    // one past the last line
  std::string text;
};

}  // namespace

StatusOr<std::string> SpliceDocuments(std::string_view text, const std::vector<int>& document_lines,
                                      std::vector<DocumentPatch> patches) {
  std::vector<std::string_view> lines = SplitLines(text);
  const int line_count = static_cast<int>(lines.size());
  auto is_marker = [&](int line) {
    return line >= 1 && line <= line_count && IsMarker(lines[line - 1]);
  };

  std::vector<Region> regions;
  for (auto& patch : patches) {
    if (patch.index >= document_lines.size()) {
      return InternalError("document " + std::to_string(patch.index) + " does not exist");
    }
    const int start = document_lines[patch.index];
    if (start < 1 || start > line_count) {
      return InternalError("document line " + std::to_string(start) + " is outside the file");
    }
    const int next_document =
        patch.index + 1 < document_lines.size() ? document_lines[patch.index + 1] : INT_MAX;
    int end = start + 1;
    while (end <= line_count && end < next_document && !is_marker(end)) ++end;

    Region region{start, end, {}};
    if (patch.replacement.has_value()) {
      // A document starting on its marker line ("--- {...}") keeps a marker.
      if (is_marker(start)) region.text = "---\n";
      region.text += *patch.replacement;
      if (!region.text.empty() && region.text.back() != '\n') region.text += '\n';
    } else {
      // Removal also takes the document's own marker and what sits between it and the
      // document, unless another document shares that stretch.
      int marker = start;
      while (marker >= 1 && !is_marker(marker)) --marker;
      const int previous = patch.index > 0 ? document_lines[patch.index - 1] : 0;
      if (marker >= 1 && previous < marker) {
        region.begin = marker;
      } else if (marker < 1 && patch.index == 0) {
        region.begin = 1;
      }
    }
    regions.push_back(std::move(region));
  }
  std::sort(regions.begin(), regions.end(),
            [](const Region& a, const Region& b) { return a.begin < b.begin; });
  // Removals next to each other become one.
  std::vector<Region> merged;
  for (Region& region : regions) {
    if (!merged.empty() && region.begin <= merged.back().end) {
      bool removals = region.text.empty() && merged.back().text.empty();
      if (removals) {
        merged.back().end = std::max(merged.back().end, region.end);
        continue;
      }
      if (region.begin < merged.back().end) return InternalError("overlapping document edits");
    }
    merged.push_back(std::move(region));
  }
  regions = std::move(merged);
  // The first document gone, a bare marker would open the file: drop it too.
  if (!regions.empty() && regions.front().begin == 1 && regions.front().text.empty() &&
      is_marker(regions.front().end) && IsBare(lines[regions.front().end - 1]) &&
      (regions.size() == 1 || regions[1].begin > regions.front().end)) {
    ++regions.front().end;
  }

  std::string out;
  out.reserve(text.size());
  int line = 1;
  for (const Region& region : regions) {
    for (; line < region.begin; ++line) out.append(lines[line - 1]);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += region.text;
    line = region.end;
  }
  for (; line <= line_count; ++line) out.append(lines[line - 1]);
  return out;
}

std::string AppendDocument(std::string_view text, bool has_documents, std::string_view rendered) {
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (has_documents) out += "---\n";
  out.append(rendered);
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

}  // namespace portico::controller
