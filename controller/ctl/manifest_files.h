// manifest_files.h: the files behind `portico-ctl apply -f` and `delete -f`: which files a path
// names (a file, "-" for stdin, or a directory's .yaml/.yml/.json files, recursively with -R),
// reading them, and the identities of the objects a file holds.
//
// Thread-safety: pure functions over the file system.
#ifndef PORTICO_CONTROLLER_CTL_MANIFEST_FILES_H_
#define PORTICO_CONTROLLER_CTL_MANIFEST_FILES_H_

#include <string>
#include <string_view>
#include <vector>

#include "portico/sdk/status.h"

namespace portico::ctl {

// CollectManifestFiles expands `path`: a regular file or "-" is itself; a directory yields its
// .yaml, .yml and .json files (hidden files skipped), sorted, descending into subdirectories
// when `recursive`. NOT_FOUND when `path` does not exist.
StatusOr<std::vector<std::string>> CollectManifestFiles(const std::string& path, bool recursive);

// ReadManifest returns the file's bytes ("-": standard input).
StatusOr<std::string> ReadManifest(const std::string& path);

// ManifestObject is the identity of one document.
struct ManifestObject {
  std::string api_version;
  std::string kind;
  std::string ns;  // empty when the document names none
  std::string name;

  // KindName is what the admin API resolves: "HTTPRoute.gateway.networking.k8s.io", "Secret".
  std::string KindName() const;
};

// ReadManifestObjects parses every document of `text` (YAML or JSON) and returns their
// identities; INVALID_ARGUMENT naming `file` and the line when a document does not parse or
// lacks apiVersion, kind or metadata.name.
StatusOr<std::vector<ManifestObject>> ReadManifestObjects(std::string_view text,
                                                          std::string_view file);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_MANIFEST_FILES_H_
