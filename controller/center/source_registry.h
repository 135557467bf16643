// source_registry.h: SourceRegistry, FileConfigCenter's bookkeeping of what every file last
// produced, which document wins each object, and what has to be delivered.
//
// Rules (config_center.h's contract, per file):
//  - A file that does not parse (or cannot be read) keeps the objects it last produced; its
//    error says how many it keeps.
//  - A file that parses produces the documents with a valid identity; the others are reported.
//    A document refused by ObjectLimits (too big) keeps the version of its object the file
//    produced before, if any.
//    When some document is incomplete (no apiVersion, kind or metadata.name: an edit or a write
//    in progress), the objects the file produced before and no longer defines are kept too, and
//    reported, until the file is complete again: a half-typed document does not delete anything.
//  - A file that is empty (zero bytes, as during a truncate-and-write) keeps its objects; one
//    with only comments or "---" defines none.
//  - An object disappears when no file claims it any more (its document or file was removed).
//  - Several claims on one object: the first by (path, document order) wins; every claim is
//    reported; when the winner goes, the next one takes over.
//  - Changes are the objects whose winning document's JSON differs from what was delivered.
//
// Paths are relative to the config directory with '/' separators; "path order" is their byte
// order. Thread-safety: none; FileConfigCenter guards it with its mutex.
#ifndef PORTICO_CONTROLLER_CENTER_SOURCE_REGISTRY_H_
#define PORTICO_CONTROLLER_CENTER_SOURCE_REGISTRY_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/center/config_center.h"
#include "controller/center/file_documents.h"
#include "portico/sdk/types.h"

namespace portico::controller {

class SourceRegistry {
 public:
  // Update records what a read of `file` found.
  void Update(const std::string& file, FileDocuments read);

  // TakeChanges returns what changed since the last call (in source order, one per object) and
  // remembers it as delivered.
  std::vector<ConfigChange> TakeChanges();

  // Errors lists every file's errors and every duplicate claim, by file and line.
  std::vector<ConfigError> Errors() const;

  // Locate lists the documents claiming `ref`, the winner first.
  std::vector<SourceLocation> Locate(const sdk::ObjectRef& ref) const;

  // Files lists the files known (including broken ones and ones without objects).
  std::vector<std::string> Files() const;
  // FilesUnder lists the known files that are `path` or lie below directory `path`.
  std::vector<std::string> FilesUnder(const std::string& path) const;

  // ObjectCount counts the objects delivered and not deleted.
  size_t ObjectCount() const { return delivered_.size(); }

 private:
  struct FileState {
    std::vector<ParsedDocument> objects;  // claims, in document order (kept ones last)
    std::vector<ConfigError> errors;
  };
  using ClaimKey = std::pair<std::string, size_t>;  // (file, index in FileState::objects)
  struct Delivered {
    std::shared_ptr<const std::string> json;
    SourceLocation source;
  };

  void AddClaims(const std::string& file, const std::vector<ParsedDocument>& objects);
  void RemoveClaims(const std::string& file, const std::vector<ParsedDocument>& objects);

  std::map<std::string, FileState> files_;
  std::map<sdk::ObjectRef, std::map<ClaimKey, ParsedDocument>> claims_;
  std::map<sdk::ObjectRef, Delivered> delivered_;
  std::set<sdk::ObjectRef> touched_;     // claims changed since TakeChanges()
  std::set<sdk::ObjectRef> duplicated_;  // more than one claim
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_SOURCE_REGISTRY_H_
