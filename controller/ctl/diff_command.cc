#include "controller/ctl/diff_command.h"

#include <iostream>
#include <memory>
#include <set>
#include <utility>

#include "core/common/percent_encoding.h"

namespace portico::ctl {
namespace {

using Value = rapidjson::Value;

constexpr size_t kShortHash = 12;

std::string Short(const std::string& hash) { return hash.substr(0, kShortHash); }

// Collect appends the entries of one kind, merging the two sorted maps.
void Collect(const std::string& kind, const std::map<std::string, std::string>* controller,
             const std::map<std::string, std::string>* gateway, std::vector<DiffEntry>* out) {
  static const std::map<std::string, std::string> kEmpty;
  const auto& c = controller != nullptr ? *controller : kEmpty;
  const auto& g = gateway != nullptr ? *gateway : kEmpty;
  auto ci = c.begin();
  auto gi = g.begin();
  while (ci != c.end() || gi != g.end()) {
    if (gi == g.end() || (ci != c.end() && ci->first < gi->first)) {
      out->push_back({DiffEntry::Op::kControllerOnly, kind, ci->first, ci->second, ""});
      ++ci;
    } else if (ci == c.end() || gi->first < ci->first) {
      out->push_back({DiffEntry::Op::kGatewayOnly, kind, gi->first, "", gi->second});
      ++gi;
    } else {
      if (ci->second != gi->second) {
        out->push_back({DiffEntry::Op::kHashDiffers, kind, ci->first, ci->second, gi->second});
      }
      ++ci;
      ++gi;
    }
  }
}

// IsGateway: whether the gateway's /api/v1/info names `name` (or has it as client id).
bool IsGateway(const Value& info, const std::string& name) {
  return json::GetString(info, "name") == name || json::GetString(info, "clientId") == name;
}

// GatewayError renders a failed call to the gateway's admin API. HttpClient's refusal message
// asks whether portico-controller runs; here the gateway is the one that did not answer.
std::string GatewayError(const Status& status, const std::string& url) {
  std::string message = status.message();
  constexpr std::string_view kControllerHint = " - is portico-controller running?";
  if (message.ends_with(kControllerHint)) {
    message.resize(message.size() - kControllerHint.size());
    message += " - is portico-gateway's admin API there? (--gateway-admin " + url + ")";
  }
  return message;
}

}  // namespace

StatusOr<SyncedKinds> ParseSyncedKinds(const Value& answer, std::string_view source) {
  const Value* kinds = json::Find(answer, "kinds");
  if (kinds == nullptr || !kinds->IsObject()) {
    return InvalidArgumentError(std::string(source) + ": the answer has no \"kinds\" object");
  }
  SyncedKinds out;
  for (const auto& kind : kinds->GetObject()) {
    std::string kind_name(kind.name.GetString(), kind.name.GetStringLength());
    if (!kind.value.IsObject()) {
      return InvalidArgumentError(std::string(source) + ": kinds[\"" + kind_name +
                                  "\"] is not an object");
    }
    auto& objects = out[kind_name];
    for (const auto& object : kind.value.GetObject()) {
      std::string object_name(object.name.GetString(), object.name.GetStringLength());
      if (!object.value.IsString()) {
        return InvalidArgumentError(std::string(source) + ": kinds[\"" + kind_name + "\"][\"" +
                                    object_name + "\"] is not a hash string");
      }
      objects[object_name] = std::string(object.value.GetString(), object.value.GetStringLength());
    }
  }
  return out;
}

std::vector<DiffEntry> DiffSynced(const SyncedKinds& controller, const SyncedKinds& gateway) {
  std::set<std::string> kinds;
  for (const auto& [kind, objects] : controller) kinds.insert(kind);
  for (const auto& [kind, objects] : gateway) kinds.insert(kind);
  std::vector<DiffEntry> out;
  for (const std::string& kind : kinds) {
    auto c = controller.find(kind);
    auto g = gateway.find(kind);
    Collect(kind, c == controller.end() ? nullptr : &c->second,
            g == gateway.end() ? nullptr : &g->second, &out);
  }
  return out;
}

std::string FormatDiffEntry(const DiffEntry& entry) {
  switch (entry.op) {
    case DiffEntry::Op::kControllerOnly:
      return "+ " + entry.kind + " " + entry.object;
    case DiffEntry::Op::kGatewayOnly:
      return "- " + entry.kind + " " + entry.object;
    case DiffEntry::Op::kHashDiffers:
      break;
  }
  return "~ " + entry.kind + " " + entry.object + " controller=" + Short(entry.controller_hash) +
         " gateway=" + Short(entry.gateway_hash);
}

int RunDiff(const DiffOptions& options, const ServerOptions& server, std::ostream& out,
            std::ostream& err) {
  if (options.gateway.empty()) {
    err << "error: diff needs --gateway NAME (see portico-ctl status)\n";
    return 2;
  }
  StatusOr<rapidjson::Document> believed = CallServer(
      server, "GET", "/api/v1/gateways/" + core::PercentEncode(options.gateway) + "/synced");
  if (!believed.ok()) {
    err << believed.status().message() << '\n';
    return 2;
  }
  ServerOptions gateway_admin = server.At(options.gateway_admin);
  StatusOr<rapidjson::Document> info = CallServer(gateway_admin, "GET", "/api/v1/info");
  if (!info.ok()) {
    err << GatewayError(info.status(), options.gateway_admin) << '\n';
    return 2;
  }
  if (!IsGateway(*info, options.gateway)) {
    err << "error: the gateway at " << options.gateway_admin << " is \""
        << json::GetString(*info, "name") << "\", not \"" << options.gateway
        << "\": pass --gateway-admin with the admin address of " << options.gateway << '\n';
    return 2;
  }
  StatusOr<rapidjson::Document> held = CallServer(gateway_admin, "GET", "/api/v1/synced");
  if (!held.ok()) {
    err << GatewayError(held.status(), options.gateway_admin) << '\n';
    return 2;
  }
  StatusOr<SyncedKinds> controller_view =
      ParseSyncedKinds(*believed, "controller " + server.server);
  StatusOr<SyncedKinds> gateway_view = ParseSyncedKinds(*held, "gateway " + options.gateway_admin);
  for (const Status& s : {controller_view.status(), gateway_view.status()}) {
    if (!s.ok()) {
      err << "error: unexpected answer from " << s.message() << '\n';
      return 2;
    }
  }
  std::vector<DiffEntry> entries = DiffSynced(*controller_view, *gateway_view);
  if (entries.empty()) {
    out << "no differences\n";
    return 0;
  }
  for (const DiffEntry& e : entries) out << FormatDiffEntry(e) << '\n';
  std::optional<int64_t> lag = json::GetInt(*info, "lag");
  const Value* connected = json::Find(*info, "connected");
  if (connected != nullptr && connected->IsBool() && !connected->GetBool()) {
    err << "note: " << options.gateway << " is not connected to its controller now\n";
  } else if (lag && *lag > 0) {
    err << "note: " << options.gateway << " is " << *lag
        << " versions behind the controller's head: changes may still be in flight\n";
  }
  return 1;
}

void AddDiffCommand(CLI::App& app, int* exit_code, const ServerOptions* server) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare what the controller believes a gateway holds with what the gateway holds");
  // Not ->required(): CLI11 would exit 106; a missing NAME is an error like the others (2).
  cmd->add_option("-g,--gateway", options->gateway,
                  "Name (or client id) of the gateway (required; see portico-ctl status)");
  cmd->add_option("--gateway-admin", options->gateway_admin,
                  "Admin API of that gateway (http://HOST:PORT)")
      ->envname("PORTICO_GATEWAY_ADMIN")
      ->capture_default_str();
  cmd->callback([options, exit_code, server] {
    *exit_code = RunDiff(*options, *server, std::cout, std::cerr);
  });
}

}  // namespace portico::ctl
