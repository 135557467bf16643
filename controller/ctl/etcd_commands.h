// etcd_commands.h: `portico-ctl import DIR` and `portico-ctl export DIR`, moving resources
// between a directory of YAML (what the file center reads) and etcd (what the etcd center reads;
// layout in controller/center/etcd_keys.h). Both talk to etcd directly (--etcd-endpoints, TLS
// and user flags as portico-controller's), so that a store can be filled before any controller
// runs and backed up with Secrets intact (the admin API redacts them).
//
// import: every .yaml/.yml/.json file below DIR is read and every document validated with the
// plugins' schemas (--plugin-dir, default the installed plugins) exactly as the controller's
// apply does; the same object twice (in two files) is an error too. Any error refuses the import
// and lists EVERY invalid object, file and line first; nothing is written. Otherwise each object
// is compared with etcd and written (compare-and-swap against the revision read, in
// transactions of 100): "httproute.gateway.networking.k8s.io/web created|configured|unchanged".
// --dry-run prints the same lines with " (dry run)" and writes nothing.
//
// export: every key under the prefix is written as one YAML file per object into DIR (which
// must be empty or absent), named as the file center names new objects
// (FileConfigCenter::NewFileName), without metadata.resourceVersion; the file center then reads
// the same objects. A value that does not parse is reported and skipped (exit 1).
//
// Thread-safety: runs on the main thread.
#ifndef PORTICO_CONTROLLER_CTL_ETCD_COMMANDS_H_
#define PORTICO_CONTROLLER_CTL_ETCD_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace portico::ctl {

struct EtcdFlags {
  std::vector<std::string> endpoints{"127.0.0.1:2379"};
  std::string prefix = "/portico";
  std::string ca_file, cert_file, key_file, user, password_file;
};

struct ImportOptions {
  std::string dir;
  bool dry_run = false;
  std::string plugin_dir;  // "": the installed plugins
  EtcdFlags etcd;
};

struct ExportOptions {
  std::string dir;
  EtcdFlags etcd;
};

// AddEtcdCommands registers `import` and `export`; `exit_code` must outlive app.parse().
void AddEtcdCommands(CLI::App& app, int* exit_code);

int RunImport(const ImportOptions& options, std::ostream& out, std::ostream& err);
int RunExport(const ExportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_ETCD_COMMANDS_H_
