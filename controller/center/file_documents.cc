#include "controller/center/file_documents.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace portico::controller {
namespace {

// ErrorLine extracts the line from a "file:line:col: ..." message of ParseYamlDocuments().
int ErrorLine(const std::string& message, const std::string& file) {
  if (!message.starts_with(file + ":")) return 0;
  int line = 0;
  for (size_t i = file.size() + 1; i < message.size() && message[i] >= '0' && message[i] <= '9';
       ++i) {
    line = line * 10 + (message[i] - '0');
    if (line > 100'000'000) return 0;
  }
  return line;
}

bool HasString(const rapidjson::Value& doc, std::string_view path) {
  const rapidjson::Value* v = json::FindPath(doc, path);
  return v != nullptr && v->IsString() && v->GetStringLength() > 0;
}

}  // namespace

StatusOr<std::string> ReadFileText(const std::filesystem::path& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return NotFoundError(path.string() + " does not exist");
    return UnavailableError("cannot open: " + std::string(std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) st.st_size = 0;
  if (st.st_size > 0 && static_cast<size_t>(st.st_size) > max_bytes) {
    ::close(fd);  // refused without reading it
    return ResourceExhaustedError("file is larger than " + std::to_string(max_bytes) + " bytes (" +
                                  std::to_string(st.st_size) +
                                  " bytes, limits.max_file_bytes); refusing it");
  }
  std::string text;
  if (st.st_size > 0) text.reserve(static_cast<size_t>(st.st_size));  // no doubling copies
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      return UnavailableError("cannot read: " + std::string(std::strerror(saved)));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return ResourceExhaustedError("file is larger than " + std::to_string(max_bytes) +
                                    " bytes; refusing it");
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::string DescribeDocument(const rapidjson::Value& doc) {
  std::string kind = json::GetString(doc, "kind");
  if (kind.empty()) return "";
  std::string ns = json::GetString(doc, "metadata.namespace");
  std::string name = json::GetString(doc, "metadata.name");
  if (name.empty()) return kind;
  return kind + " " + (ns.empty() ? name : ns + "/" + name);
}

StatusOr<sdk::ObjectRef> IdentifyDocument(const rapidjson::Value& doc,
                                          const ObjectIdentifier& identifier, bool* incomplete) {
  if (incomplete != nullptr) *incomplete = true;
  if (!doc.IsObject()) {
    return InvalidArgumentError("document is not a map with apiVersion, kind and metadata");
  }
  if (!HasString(doc, "apiVersion")) return InvalidArgumentError("document has no apiVersion");
  if (!HasString(doc, "kind")) return InvalidArgumentError("document has no kind");
  if (!HasString(doc, "metadata.name")) {
    return InvalidArgumentError(DescribeDocument(doc) + " document has no metadata.name");
  }
  if (incomplete != nullptr) *incomplete = false;
  StatusOr<sdk::ObjectRef> ref = identifier(doc);
  if (!ref.ok()) return ref.status().WithPrefix(DescribeDocument(doc));
  if (ref->kind.empty() || ref->name.empty()) {
    return InvalidArgumentError(DescribeDocument(doc) + ": identified without kind or name");
  }
  return ref;
}

FileDocuments ReadFileDocuments(const std::filesystem::path& root, const std::string& rel,
                                const FileReadOptions& options) {
  FileDocuments out;
  std::filesystem::path path = root / rel;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    out.state = FileDocuments::State::kGone;
    return out;
  }
  StatusOr<std::string> text = ReadFileText(path, options.max_file_bytes);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      out.state = FileDocuments::State::kGone;  // removed between the check and the read
      return out;
    }
    out.state = FileDocuments::State::kUnparsable;
    out.errors.push_back({{rel, 0}, "", rel + ": " + text.status().message()});
    return out;
  }
  if (text->empty()) {
    out.state = FileDocuments::State::kEmpty;
    return out;
  }
  StatusOr<std::vector<YamlDocument>> docs = ParseYamlDocuments(*text, rel, options.limits);
  std::string().swap(*text);  // the documents hold what is needed; a large text goes now
  if (!docs.ok()) {
    out.state = FileDocuments::State::kUnparsable;
    out.errors.push_back(
        {{rel, ErrorLine(docs.status().message(), rel)}, "", docs.status().message()});
    return out;
  }
  if (docs->size() > options.objects.max_objects_per_file) {
    out.state = FileDocuments::State::kUnparsable;
    out.errors.push_back({{rel, 0},
                          "",
                          rel + ": " + std::to_string(docs->size()) +
                              " documents, more than the limit of " +
                              std::to_string(options.objects.max_objects_per_file) +
                              " (limits.max_objects_per_file); refusing the file"});
    return out;
  }
  out.state = FileDocuments::State::kParsed;
  for (YamlDocument& doc : *docs) {
    bool incomplete = false;
    StatusOr<sdk::ObjectRef> ref = IdentifyDocument(doc.json, *options.identifier, &incomplete);
    if (!ref.ok()) {
      out.incomplete = out.incomplete || incomplete;
      out.errors.push_back({{rel, doc.line},
                            DescribeDocument(doc.json),
                            rel + ":" + std::to_string(doc.line) + ": " + ref.status().message()});
      continue;
    }
    if (Status within = CheckObjectLimits(doc.json, options.objects); !within.ok()) {
      out.refused.emplace_back(*ref, out.errors.size());
      out.errors.push_back({{rel, doc.line},
                            ref->Display(),
                            rel + ":" + std::to_string(doc.line) + ": " + ref->Display() +
                                ": refused: " + within.message()});
      rapidjson::Document().Swap(doc.json);  // give the memory back now, not after the file
      continue;
    }
    ParsedDocument parsed;
    parsed.ref = std::move(ref).value();
    parsed.line = doc.line;
    parsed.json = std::make_shared<const std::string>(json::Serialize(doc.json));
    parsed.doc = std::make_shared<const rapidjson::Document>(std::move(doc.json));
    out.objects.push_back(std::move(parsed));
  }
  return out;
}

}  // namespace portico::controller
