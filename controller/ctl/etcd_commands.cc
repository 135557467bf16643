#include "controller/ctl/etcd_commands.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "controller/admin/apply_documents.h"
#include "controller/center/atomic_write.h"
#include "controller/center/etcd_client.h"
#include "controller/center/etcd_keys.h"
#include "controller/center/etcd_writes.h"
#include "controller/center/file_config_center.h"
#include "controller/center/yaml_render.h"
#include "controller/center/yaml_to_json.h"
#include "controller/ctl/apply_command.h"
#include "controller/ctl/manifest_files.h"
#include "controller/reconcile/object_json.h"
#include "core/plugin/default_plugin_dir.h"
#include "core/plugin/plugin_loader.h"

namespace portico::ctl {
namespace {

namespace fs = std::filesystem;
using controller::EtcdClient;

void AddEtcdFlags(CLI::App* cmd, EtcdFlags* f) {
  cmd->add_option("--etcd-endpoints", f->endpoints, "etcd endpoints (host:port, comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--etcd-prefix", f->prefix, "etcd key prefix")->capture_default_str();
  cmd->add_option("--etcd-ca-file", f->ca_file, "etcd TLS: CA of the etcd servers");
  cmd->add_option("--etcd-cert-file", f->cert_file, "etcd TLS: client certificate");
  cmd->add_option("--etcd-key-file", f->key_file, "etcd TLS: client private key");
  cmd->add_option("--etcd-user", f->user, "etcd authentication: user name");
  cmd->add_option("--etcd-password-file", f->password_file,
                  "etcd authentication: file holding the password");
}

StatusOr<std::unique_ptr<EtcdClient>> Connect(const EtcdFlags& f) {
  controller::EtcdClientOptions o;
  o.endpoints = f.endpoints;
  o.ca_file = f.ca_file;
  o.cert_file = f.cert_file;
  o.key_file = f.key_file;
  o.user = f.user;
  PORTICO_ASSIGN_OR_RETURN(o.password, controller::ReadEtcdPassword("", f.password_file));
  return EtcdClient::Create(std::move(o));
}

// Store is a connection to etcd and everything under the prefix, read at one revision.
struct Store {
  std::unique_ptr<EtcdClient> client;
  std::string prefix;  // with its trailing '/'
  int64_t revision = 0;
  std::vector<mvccpb::KeyValue> kvs;
};

StatusOr<Store> ReadStore(const EtcdFlags& f) {
  Store store;
  PORTICO_ASSIGN_OR_RETURN(store.client, Connect(f));
  store.prefix = controller::EtcdPrefixDir(f.prefix);
  PORTICO_ASSIGN_OR_RETURN(
      store.kvs, controller::RangePrefix(*store.client, store.prefix, 1000, &store.revision));
  // The controllers' own keys (leader, status) are not resources.
  std::erase_if(store.kvs, [&](const mvccpb::KeyValue& kv) {
    return controller::EtcdReservedKey(store.prefix, kv.key());
  });
  return store;
}

// ImportObject is one valid document of the directory.
struct ImportObject {
  sdk::ObjectRef ref;
  std::string plural_kind;  // "httproute.gateway.networking.k8s.io"
  std::string where;        // "routes.yaml:12"
  std::string value;        // what is stored
};

}  // namespace

int RunImport(const ImportOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<std::vector<std::string>> files = CollectManifestFiles(options.dir, true);
  if (!files.ok()) {
    err << "error: " << files.status().message() << '\n';
    return 1;
  }
  std::string plugin_dir =
      options.plugin_dir.empty() ? core::DefaultPluginDir() : options.plugin_dir;
  StatusOr<core::PluginSet> plugins = core::LoadPluginDir(plugin_dir);
  if (!plugins.ok()) {
    err << "error: " << plugins.status().message() << '\n';
    return 1;
  }
  StatusOr<controller::ObjectValidator> validator =
      controller::ObjectValidator::Create(plugins->registry);
  if (!validator.ok()) {
    err << "error: " << validator.status().message() << '\n';
    return 1;
  }
  std::vector<ImportObject> objects;
  std::map<sdk::ObjectRef, std::string> seen;
  std::vector<std::string> errors;
  for (const std::string& path : *files) {
    // Messages name files relative to DIR.
    std::error_code rel_ec;
    std::string file = fs::relative(path, options.dir, rel_ec).string();
    if (rel_ec || file.empty()) file = path;
    StatusOr<std::string> text = ReadManifest(path);
    if (!text.ok()) {
      errors.push_back(file + ": " + text.status().message());
      continue;
    }
    StatusOr<std::vector<controller::admin::PreparedObject>> prepared =
        controller::admin::PrepareApply(*text, *validator);
    if (!prepared.ok()) {
      // One line per document at fault, each named by the file.
      std::string message = prepared.status().message();
      constexpr std::string_view kHead = "apply refused, nothing was written:\n";
      if (message.starts_with(kHead)) message = message.substr(kHead.size());
      size_t start = 0;
      while (start <= message.size()) {
        size_t end = message.find('\n', start);
        if (end == std::string::npos) end = message.size();
        if (end > start) errors.push_back(file + ": " + message.substr(start, end - start));
        start = end + 1;
      }
      continue;
    }
    StatusOr<std::vector<controller::YamlDocument>> docs =
        controller::ParseYamlDocuments(*text, file);
    if (!docs.ok() || docs->size() != prepared->size()) {
      errors.push_back(file + ": cannot be read twice the same way");
      continue;
    }
    for (size_t i = 0; i < prepared->size(); ++i) {
      const controller::admin::PreparedObject& p = (*prepared)[i];
      std::string where = file + ":" + std::to_string(p.line);
      auto [it, added] = seen.emplace(p.validated.ref, where);
      if (!added) {
        errors.push_back(where + ": " + p.validated.ref.Display() + " is already defined at " +
                         it->second);
        continue;
      }
      objects.push_back(ImportObject{p.validated.ref,
                                     LowerKindGroup(p.validated.ref.kind, p.validated.ref.group),
                                     where, controller::EtcdStoredValue((*docs)[i].json)});
    }
  }
  if (!errors.empty()) {
    err << "import refused, nothing was written: " << errors.size() << " invalid object"
        << (errors.size() == 1 ? "" : "s") << ":\n";
    for (const std::string& e : errors) err << "  " << e << '\n';
    return 1;
  }

  StatusOr<Store> store = ReadStore(options.etcd);
  if (!store.ok()) {
    err << "error: " << store.status().message() << '\n';
    return 1;
  }
  const std::string& prefix = store->prefix;
  int64_t revision = store->revision;
  std::map<std::string, const mvccpb::KeyValue*> by_key;
  for (const mvccpb::KeyValue& kv : store->kvs) by_key[kv.key()] = &kv;
  std::vector<controller::EtcdWrite> writes;
  std::vector<std::string> lines;
  for (ImportObject& o : objects) {
    controller::EtcdWrite w;
    w.ref = o.ref;
    w.key = controller::EtcdKey(prefix, o.ref);
    w.value = std::move(o.value);
    auto it = by_key.find(w.key);
    std::string result = "created";
    if (it != by_key.end()) {
      w.expected = it->second->mod_revision();
      result = it->second->value() == w.value ? "unchanged" : "configured";
    }
    lines.push_back(o.plural_kind + "/" + o.ref.name + " " + result +
                    (options.dry_run ? " (dry run)" : ""));
    if (result != "unchanged") writes.push_back(std::move(w));
  }
  if (!options.dry_run && !writes.empty()) {
    StatusOr<int64_t> written = controller::CommitEtcdWrites(*store->client, writes);
    if (!written.ok()) {
      err << "import: " << written.status().message() << '\n';
      return 1;
    }
    revision = *written;
  }
  for (const std::string& line : lines) out << line << '\n';
  out << objects.size() << " objects, " << writes.size()
      << (options.dry_run ? " would be written" : " written") << " (etcd revision " << revision
      << ")\n";
  return 0;
}

int RunExport(const ExportOptions& options, std::ostream& out, std::ostream& err) {
  fs::path dir = options.dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    err << "error: export: " << dir.string()
        << " is not empty (the file center would read what is there too)\n";
    return 1;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    err << "error: export: cannot create " << dir.string() << ": " << ec.message() << '\n';
    return 1;
  }
  StatusOr<Store> store = ReadStore(options.etcd);
  if (!store.ok()) {
    err << "error: " << store.status().message() << '\n';
    return 1;
  }
  const std::string& prefix = store->prefix;
  int failed = 0;
  size_t exported = 0;
  for (const mvccpb::KeyValue& kv : store->kvs) {
    auto fail = [&](const std::string& message) {
      err << "export: etcd key " << kv.key() << ": " << message << " (skipped)\n";
      ++failed;
    };
    StatusOr<sdk::ObjectRef> ref = controller::EtcdKeyRef(prefix, kv.key());
    if (!ref.ok()) {
      fail(ref.status().message());
      continue;
    }
    StatusOr<std::vector<controller::YamlDocument>> docs =
        controller::ParseYamlDocuments(kv.value(), kv.key());
    if (!docs.ok() || docs->size() != 1 || !docs->front().json.IsObject()) {
      fail(docs.ok() ? "the value is not one object" : docs.status().message());
      continue;
    }
    rapidjson::Document& doc = docs->front().json;
    if (rapidjson::Value* meta = doc.HasMember("metadata") ? &doc["metadata"] : nullptr;
        meta != nullptr && meta->IsObject()) {
      meta->RemoveMember("resourceVersion");
    }
    StatusOr<std::string> yaml = controller::RenderYaml(doc);
    if (!yaml.ok()) {
      fail(yaml.status().message());
      continue;
    }
    std::string base = controller::FileConfigCenter::NewFileName(*ref);
    fs::path path = dir / base;
    for (int n = 1; fs::exists(path, ec); ++n) {
      path = dir / (base.substr(0, base.size() - 5) + "-" + std::to_string(n) + ".yaml");
    }
    // Secrets leave etcd readable by their owner only.
    Status written =
        controller::WriteFileAtomically(path, *yaml, controller::IsSecret(*ref) ? 0600 : 0644);
    if (!written.ok()) {
      fail(written.message());
      continue;
    }
    ++exported;
  }
  out << "exported " << exported << " objects to " << dir.string() << " (etcd revision "
      << store->revision << ")\n";
  return failed == 0 ? 0 : 1;
}

void AddEtcdCommands(CLI::App& app, int* exit_code) {
  auto import_options = std::make_shared<ImportOptions>();
  CLI::App* import_cmd =
      app.add_subcommand("import", "Load a directory of YAML into etcd (validated first)");
  import_cmd->add_option("dir", import_options->dir, "Directory of .yaml/.yml/.json files")
      ->required();
  import_cmd->add_flag("--dry-run", import_options->dry_run,
                       "Validate and compare with etcd; write nothing");
  import_cmd->add_option("--plugin-dir", import_options->plugin_dir,
                         "Plugins whose schemas validate the objects (default: installed)");
  AddEtcdFlags(import_cmd, &import_options->etcd);
  import_cmd->callback([import_options, exit_code] {
    *exit_code = RunImport(*import_options, std::cout, std::cerr);
  });

  auto export_options = std::make_shared<ExportOptions>();
  CLI::App* export_cmd =
      app.add_subcommand("export", "Write etcd's objects into a directory the file center reads");
  export_cmd->add_option("dir", export_options->dir, "Directory to create (empty or absent)")
      ->required();
  AddEtcdFlags(export_cmd, &export_options->etcd);
  export_cmd->callback([export_options, exit_code] {
    *exit_code = RunExport(*export_options, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
