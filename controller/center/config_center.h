// config_center.h: ConfigCenter, where the controller's resources come from (DESIGN.md §6), and
// the change batches it hands to a ConfigListener. The first implementation is the file system
// (file_config_center.h); etcd and Kubernetes come later behind the same interface.
//
// Contract:
//  - Start() delivers the complete initial set as ONE OnChanges() batch (initial = true) before
//    it returns, then watches and delivers debounced batches from its own thread.
//  - Nothing is lost on bad input: a source that stops parsing keeps the objects it last
//    produced (no deletes are emitted for them) and its error is reported by Errors(); an object
//    disappears only when its document or file is removed.
//  - Two documents claiming one object: the first by source order wins; both are reported.
//  - Upserts are emitted only when an object's content changed (byte-equal JSON is no change).
//
// Threading: OnChanges() is called from one thread at a time (the center's watcher thread, or
// the caller of Start()); the listener must not call back into the center from inside it.
// Errors(), Apply() and Delete() may be called from any thread.
// Ownership: the listener must outlive Stop().
#ifndef PORTICO_CONTROLLER_CENTER_CONFIG_CENTER_H_
#define PORTICO_CONTROLLER_CENTER_CONFIG_CENTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/json.h"
#include "portico/sdk/status.h"
#include "portico/sdk/types.h"

namespace portico::controller {

// SourceLocation: where a document came from ("routes/web.yaml", line 12).
struct SourceLocation {
  std::string file;  // path relative to the config directory
  int line = 0;      // 1-based line where the document starts; 0 when unknown
};

// ConfigChange is one object added, changed or removed at the source.
struct ConfigChange {
  enum class Op { kUpsert, kDelete };
  Op op = Op::kUpsert;
  sdk::ObjectRef ref;  // identity as computed by the center's ObjectIdentifier
  // The whole document as written (apiVersion, kind, metadata, spec; no defaults applied).
  // Null on delete.
  std::shared_ptr<const rapidjson::Document> doc;
  SourceLocation source;
};

// FieldViolation is one problem of an object at one field.
struct FieldViolation {
  std::string field;    // "spec.rules[0].matches[0].path.type"; "" for the object as a whole
  std::string message;  // "must be one of "Exact", "PathPrefix" (got "Prefix")"
  int line = 0;         // where the field is written in SourceLocation::file; 0 when unknown
};

// ConfigError is a problem with a source: a file that does not parse, a document without
// apiVersion/kind/name, a duplicate claim, an object refused. `object` is set when the error
// concerns one object.
struct ConfigError {
  SourceLocation source;
  std::string object;   // e.g. "HTTPRoute default/web"; empty for file-level errors
  std::string message;  // names the file, line and field
  // An object refused by the controller (schema, processor): every violation, and the
  // generation refused and the one still serving (0: none).
  std::vector<FieldViolation> violations;
  int64_t refused_generation = 0;
  int64_t serving_generation = 0;
};

// ObjectIdentifier computes an object's identity from its document (it knows which kinds exist
// and which are cluster-scoped, and puts namespaced objects without a namespace into
// "default"). An error (unknown kind, no name) is reported as a ConfigError for the document.
using ObjectIdentifier = std::function<StatusOr<sdk::ObjectRef>(const rapidjson::Value& doc)>;

// ConfigListener receives the center's change batches.
class ConfigListener {
 public:
  virtual ~ConfigListener() = default;
  // OnChanges: `changes` in source order, at most one per object; `initial` marks Start()'s batch.
  virtual void OnChanges(std::vector<ConfigChange> changes, bool initial) = 0;
};

// ConfigCenter is a source of resources. See the file comment for the contract.
class ConfigCenter {
 public:
  virtual ~ConfigCenter() = default;

  virtual Status Start(ConfigListener* listener) = 0;
  virtual void Stop() = 0;

  // Errors lists the current problems of the source (cleared when fixed).
  virtual std::vector<ConfigError> Errors() const = 0;

  // Apply writes objects (one or more YAML/JSON documents) to the source: an object that exists
  // is replaced where it lives, a new one goes to a new file named after it. Writes are atomic
  // (temp file + rename). The change comes back through OnChanges like any other edit.
  virtual Status Apply(std::string_view documents) = 0;
  // Delete removes an object's document from the source (its file when it is the only one).
  virtual Status Delete(const sdk::ObjectRef& ref) = 0;
  // Resync re-reads the whole source and delivers what changed (the admin API's reload).
  virtual Status Resync() = 0;

  // Describe names the source for logs and server info ("file:/etc/portico/conf.d").
  virtual std::string Describe() const = 0;
};

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_CONFIG_CENTER_H_
