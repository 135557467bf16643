#include "controller/center/source_registry.h"

#include <algorithm>
#include <tuple>

namespace portico::controller {
namespace {

std::string Where(const std::string& file, int line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

std::string Objects(size_t n) { return std::to_string(n) + (n == 1 ? " object" : " objects"); }

// NoteKept appends what a broken file keeps to its errors.
void NoteKept(std::vector<ConfigError>& errors, size_t kept) {
  if (kept == 0) return;
  for (ConfigError& error : errors) {
    error.message += "; keeping the " + Objects(kept) + " it last defined";
  }
}

}  // namespace

void SourceRegistry::Update(const std::string& file, FileDocuments read) {
  auto it = files_.find(file);
  switch (read.state) {
    case FileDocuments::State::kGone:
      if (it == files_.end()) return;
      RemoveClaims(file, it->second.objects);
      files_.erase(it);
      return;
    case FileDocuments::State::kUnparsable: {
      FileState& state = files_[file];
      state.errors = std::move(read.errors);
      NoteKept(state.errors, state.objects.size());
      return;
    }
    case FileDocuments::State::kEmpty: {
      FileState& state = files_[file];
      state.errors.clear();
      if (!state.objects.empty()) {
        state.errors.push_back({{file, 0},
                                "",
                                file + ": file is empty (being written?); keeping the " +
                                    Objects(state.objects.size()) +
                                    " it last defined until it has content or is removed"});
      }
      return;
    }
    case FileDocuments::State::kParsed:
      break;
  }

  std::vector<ParsedDocument> objects = std::move(read.objects);
  std::vector<ConfigError> errors = std::move(read.errors);
  if (it != files_.end()) {
    std::set<sdk::ObjectRef> defined;
    for (const ParsedDocument& object : objects) defined.insert(object.ref);
    // A refused document keeps the version the file produced before (nothing is lost).
    for (const auto& [ref, error] : read.refused) {
      if (defined.count(ref) != 0) continue;
      for (const ParsedDocument& old : it->second.objects) {
        if (old.ref != ref) continue;
        objects.push_back(old);
        defined.insert(ref);
        errors[error].message += "; keeping its last good version";
        break;
      }
    }
    if (read.incomplete) {
      std::string names;
      size_t kept = 0;
      for (const ParsedDocument& old : it->second.objects) {
        if (defined.count(old.ref) != 0) continue;
        objects.push_back(old);
        names += (kept++ == 0 ? "" : ", ") + old.ref.Display();
      }
      if (kept > 0) {
        errors.push_back(
            {{file, 0},
             "",
             file + ": keeping the " + Objects(kept) +
                 " it no longer defines until its incomplete documents are fixed: " + names});
      }
    }
    RemoveClaims(file, it->second.objects);
  }
  FileState& state = files_[file];
  state.objects = std::move(objects);
  state.errors = std::move(errors);
  AddClaims(file, state.objects);
}

void SourceRegistry::AddClaims(const std::string& file,
                               const std::vector<ParsedDocument>& objects) {
  for (size_t i = 0; i < objects.size(); ++i) {
    claims_[objects[i].ref][{file, i}] = objects[i];
    touched_.insert(objects[i].ref);
  }
}

void SourceRegistry::RemoveClaims(const std::string& file,
                                  const std::vector<ParsedDocument>& objects) {
  for (size_t i = 0; i < objects.size(); ++i) {
    auto it = claims_.find(objects[i].ref);
    if (it == claims_.end()) continue;
    it->second.erase({file, i});
    if (it->second.empty()) claims_.erase(it);
    touched_.insert(objects[i].ref);
  }
}

std::vector<ConfigChange> SourceRegistry::TakeChanges() {
  std::vector<ConfigChange> changes;
  for (const sdk::ObjectRef& ref : touched_) {
    auto claims = claims_.find(ref);
    if (claims != claims_.end() && claims->second.size() > 1) {
      duplicated_.insert(ref);
    } else {
      duplicated_.erase(ref);
    }
    auto delivered = delivered_.find(ref);
    if (claims == claims_.end()) {
      if (delivered == delivered_.end()) continue;
      ConfigChange change;
      change.op = ConfigChange::Op::kDelete;
      change.ref = ref;
      change.source = delivered->second.source;
      changes.push_back(std::move(change));
      delivered_.erase(delivered);
      continue;
    }
    const auto& [key, winner] = *claims->second.begin();
    SourceLocation source{key.first, winner.line};
    if (delivered != delivered_.end() && *delivered->second.json == *winner.json) {
      delivered->second.source = source;  // same content from another place: no change
      continue;
    }
    ConfigChange change;
    change.op = ConfigChange::Op::kUpsert;
    change.ref = ref;
    change.doc = winner.doc;
    change.source = source;
    changes.push_back(std::move(change));
    delivered_[ref] = Delivered{winner.json, source};
  }
  touched_.clear();
  std::stable_sort(
      changes.begin(), changes.end(), [](const ConfigChange& a, const ConfigChange& b) {
        return std::tie(a.source.file, a.source.line) < std::tie(b.source.file, b.source.line);
      });
  return changes;
}

std::vector<ConfigError> SourceRegistry::Errors() const {
  std::vector<ConfigError> errors;
  for (const auto& [file, state] : files_) {
    errors.insert(errors.end(), state.errors.begin(), state.errors.end());
  }
  for (const sdk::ObjectRef& ref : duplicated_) {
    auto claims = claims_.find(ref);
    if (claims == claims_.end() || claims->second.size() < 2) continue;
    auto it = claims->second.begin();
    const std::string winner = Where(it->first.first, it->second.line);
    SourceLocation winner_source{it->first.first, it->second.line};
    std::string losers;
    for (++it; it != claims->second.end(); ++it) {
      const std::string loser = Where(it->first.first, it->second.line);
      losers += (losers.empty() ? "" : ", ") + loser;
      errors.push_back({{it->first.first, it->second.line},
                        ref.Display(),
                        loser + ": " + ref.Display() + " is also defined at " + winner +
                            ", which wins (the first by path order); this document is ignored"});
    }
    errors.push_back({winner_source, ref.Display(),
                      winner + ": " + ref.Display() + " is also defined at " + losers +
                          " (ignored: the first by path order wins)"});
  }
  std::sort(errors.begin(), errors.end(), [](const ConfigError& a, const ConfigError& b) {
    return std::tie(a.source.file, a.source.line, a.message) <
           std::tie(b.source.file, b.source.line, b.message);
  });
  return errors;
}

std::vector<SourceLocation> SourceRegistry::Locate(const sdk::ObjectRef& ref) const {
  std::vector<SourceLocation> out;
  auto claims = claims_.find(ref);
  if (claims == claims_.end()) return out;
  for (const auto& [key, doc] : claims->second) out.push_back({key.first, doc.line});
  return out;
}

std::vector<std::string> SourceRegistry::Files() const {
  std::vector<std::string> out;
  out.reserve(files_.size());
  for (const auto& [file, state] : files_) out.push_back(file);
  return out;
}

std::vector<std::string> SourceRegistry::FilesUnder(const std::string& path) const {
  if (path.empty()) return Files();
  std::vector<std::string> out;
  for (auto it = files_.lower_bound(path); it != files_.end() && it->first.starts_with(path);
       ++it) {
    if (it->first.size() == path.size() || it->first[path.size()] == '/') out.push_back(it->first);
  }
  return out;
}

}  // namespace portico::controller
