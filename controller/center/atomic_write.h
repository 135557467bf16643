// atomic_write.h: replacing and removing files so that a reader (the config watcher, another
// process) sees either the old content or the new one, never a half-written file, and the change
// survives a crash.
//
// WriteFileAtomically writes a temporary file in the target's directory whose name starts with a
// dot (".<name>.XXXXXX", which IsConfigFile() ignores), fsyncs it, renames it onto the target and
// fsyncs the directory. An existing target's permission bits are kept; a new file gets
// `new_file_mode` (0600 for files that hold Secrets: issue 15 item 10).
//
// Thread-safety: free functions; concurrent writers of one path race (last rename wins), so
// callers serialise writes to the same file.
#ifndef PORTICO_CONTROLLER_CENTER_ATOMIC_WRITE_H_
#define PORTICO_CONTROLLER_CENTER_ATOMIC_WRITE_H_

#include <sys/types.h>

#include <filesystem>
#include <string_view>

#include "portico/sdk/status.h"

namespace portico::controller {

// WriteFileAtomically replaces (or creates) `path` with `content`.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content,
                           mode_t new_file_mode = 0644);

// RemoveFileDurably unlinks `path` and fsyncs its directory; NotFound when it does not exist.
Status RemoveFileDurably(const std::filesystem::path& path);

}  // namespace portico::controller

#endif  // PORTICO_CONTROLLER_CENTER_ATOMIC_WRITE_H_
