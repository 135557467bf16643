// dependency_index.h: DependencyIndex, who read what (DESIGN.md §3): every read a processor makes
// through the host context, hits and misses alike, is recorded against the object being
// processed (the reader), so that a change to what was read requeues exactly its readers.
//
// Read kinds:
//  - get: another object's export by key ("group/Kind/ns/name"); also extension refs. A reader
//    is affected when that export appears, changes (bytes) or disappears.
//  - list: the exports of (group, kind) in a namespace ("" = all) matching a label selector. A
//    reader is affected when an object in that scope that matches the selector before or after
//    the change (its export present) appears, disappears, changes its export or its labels.
//  - secret: a Secret's payload by (ns, name); affected when the payload changes.
//
// Race freedom: a reader's reads are registered here *before* the host reads the object table,
// and a writer commits to the table *before* asking for readers. So either the writer sees the
// registration (and requeues the reader) or the reader saw the written value.
//
// Thread-safety: every method may be called from any thread (one internal mutex).
#ifndef PORTICO_CONTROLLER_RECONCILE_DEPENDENCY_INDEX_H_
#define PORTICO_CONTROLLER_RECONCILE_DEPENDENCY_INDEX_H_

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "portico/sdk/label_selector.h"

namespace portico::controller {

// ObjectChange describes what happened to one object's readable state.
struct ObjectChange {
  std::string key;  // "group/Kind/ns/name"
  std::string group;
  std::string kind;
  std::string ns;
  const std::optional<std::string>* export_before = nullptr;  // null: none
  const std::optional<std::string>* export_after = nullptr;
  const std::map<std::string, std::string>* labels_before = nullptr;  // null: empty
  const std::map<std::string, std::string>* labels_after = nullptr;
};

// ReadRecorder is where a processing run's reads are registered (HostContext calls it before
// reading): the DependencyIndex itself, or a recorder that ships them out of an isolated child
// (isolated_process.h). Thread-safety: as the implementation says.
class ReadRecorder {
 public:
  virtual ~ReadRecorder() = default;
  virtual void AddGet(const std::string& reader, const std::string& key) = 0;
  virtual void AddList(const std::string& reader, std::string_view group, std::string_view kind,
                       std::string_view ns, std::string_view selector_text,
                       const sdk::LabelSelector& selector) = 0;
  virtual void AddSecret(const std::string& reader, std::string_view ns, std::string_view name) = 0;
};

class DependencyIndex final : public ReadRecorder {
 public:
  DependencyIndex() = default;
  DependencyIndex(const DependencyIndex&) = delete;
  DependencyIndex& operator=(const DependencyIndex&) = delete;

  // BeginReads forgets `reader`'s previous reads: called before each processing run, whose
  // reads then replace them.
  void BeginReads(const std::string& reader) { RemoveReader(reader); }
  // RemoveReader forgets everything `reader` read (the reader was deleted).
  void RemoveReader(const std::string& reader);

  void AddGet(const std::string& reader, const std::string& key) override;
  void AddList(const std::string& reader, std::string_view group, std::string_view kind,
               std::string_view ns, std::string_view selector_text,
               const sdk::LabelSelector& selector) override;
  void AddSecret(const std::string& reader, std::string_view ns, std::string_view name) override;

  // ReadersOf returns the readers affected by `change`, sorted.
  std::vector<std::string> ReadersOf(const ObjectChange& change) const;
  // ReadersOfSecret returns the readers of the Secret (ns, name), sorted.
  std::vector<std::string> ReadersOfSecret(std::string_view ns, std::string_view name) const;

  // ReadsOf describes `reader`'s current reads, sorted: "get <key>", "list <group/Kind/ns>
  // [selector]", "secret <ns>/<name>" (diagnostics and tests).
  std::vector<std::string> ReadsOf(const std::string& reader) const;
  size_t ReaderCount() const;

 private:
  struct Selector {
    std::string text;
    sdk::LabelSelector parsed;
  };
  struct Reads {
    std::set<std::string> gets;                           // object keys and secret keys
    std::set<std::pair<std::string, std::string>> lists;  // (scope, selector text)
  };

  static std::string Scope(std::string_view group, std::string_view kind, std::string_view ns);
  static std::string SecretKey(std::string_view ns, std::string_view name);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Reads> by_reader_;
  std::unordered_map<std::string, std::unordered_set<std::string>> getters_;  // key -> readers
  // scope -> reader -> selectors
  std::unordered_map<std::string, std::unordered_map<std::string, std::vector<Selector>>> listers_;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_RECONCILE_DEPENDENCY_INDEX_H_
