#include "controller/sync/watch_stream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <utility>

#include "core/plugin/kind_id.h"
#include "portico/sdk/abi.h"

namespace portico::controller::sync {
namespace {

namespace pb = portico::sync::v1;

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// IdentityOf is who a Hello says the gateway is: its name, addresses and plugin inventory.
SessionIdentity IdentityOf(const pb::Hello& hello, const std::string& peer) {
  SessionIdentity identity;
  identity.name = hello.name().empty() ? hello.client_id() : hello.name();
  identity.client_id = hello.client_id();
  identity.peer = peer;
  identity.addresses.assign(hello.addresses().begin(), hello.addresses().end());
  for (const pb::PluginInfo& plugin : hello.plugins()) {
    GatewayPlugin& p = identity.plugins.emplace_back();
    p.name = plugin.name();
    p.version = plugin.version();
    p.sha256 = plugin.sha256();
    for (const pb::KindHandler& kind : plugin.kinds()) {
      if ((kind.capabilities() & PORTICO_CAP_HANDLER) == 0) continue;
      p.handlers.push_back(core::KindId{kind.group(), kind.kind()}.ToString());
    }
    for (const pb::FilterType& type : plugin.filter_types()) {
      p.filter_types.push_back(type.name() + " (" + type.phase() + ")");
    }
  }
  identity.connected_unix_ms = NowUnixMs();
  return identity;
}

}  // namespace

bool WatchStream::MarkScheduled() {
  std::lock_guard lock(mu_);
  if (scheduled_) return false;
  scheduled_ = true;
  return true;
}

void WatchStream::MarkHeartbeat() {
  std::lock_guard lock(mu_);
  heartbeat_due_ = true;
}

void WatchStream::OnReadDone(bool ok) {
  {
    std::lock_guard lock(mu_);
    if (ok) {
      read_ready_ = true;
    } else {
      RequestFinishLocked(grpc::Status::OK);  // the gateway closed its side
    }
  }
  host_->Schedule(shared_from_this());
}

void WatchStream::OnWriteDone(bool ok) {
  {
    std::lock_guard lock(mu_);
    write_in_flight_ = false;
    if (!ok) RequestFinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
    if (finish_after_write_) {
      RequestFinishLocked(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, rejection_reason_));
    }
  }
  host_->Schedule(shared_from_this());
}

void WatchStream::OnCancel() {
  {
    std::lock_guard lock(mu_);
    RequestFinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }
  host_->Schedule(shared_from_this());
}

void WatchStream::OnDone() {
  std::shared_ptr<WatchStream> keep = shared_from_this();  // `this` may die with it, at return
  host_->OnStreamDone(id_, session_);
}

void WatchStream::Pump() {
  {
    std::lock_guard lock(mu_);
    scheduled_ = false;
    if (pumping_) {
      repump_ = true;
      return;
    }
    pumping_ = true;
  }
  while (true) {
    std::optional<pb::WatchRequest> request;
    {
      std::lock_guard lock(mu_);
      repump_ = false;
      if (finish_called_) {
        pumping_ = false;
        return;
      }
      if (read_ready_) {
        request = std::move(request_);
        request_.Clear();
        read_ready_ = false;
      }
    }
    if (request) {
      Status handled = Handle(*request);
      if (!handled.ok()) {
        Reject(handled.message());
      } else {
        StartRead(&request_);
      }
    }

    std::optional<grpc::Status> finish;
    bool can_write = false;
    bool heartbeat = false;
    {
      std::lock_guard lock(mu_);
      if (finish_requested_ && !write_in_flight_) {
        finish_called_ = true;
        finish = finish_status_;
      } else {
        can_write = !write_in_flight_ && !finish_requested_;
        heartbeat = heartbeat_due_;
      }
    }
    if (finish) {
      Finish(*finish);
      std::lock_guard lock(mu_);
      pumping_ = false;
      return;
    }
    if (can_write) WriteNext(heartbeat);
    std::lock_guard lock(mu_);
    if (!repump_) {
      pumping_ = false;
      return;
    }
  }
}

void WatchStream::WriteNext(bool heartbeat) {
  std::optional<pb::WatchResponse> message;
  bool finish_after = false;
  if (!rejection_reason_.empty() && !rejection_sent_) {
    message.emplace();
    message->mutable_rejected()->set_reason(rejection_reason_);
    rejection_sent_ = true;
    finish_after = true;
  } else if (session_ && rejection_reason_.empty()) {
    bool due = heartbeat;
    message = session_->Next(host_->ServerId(), host_->MayCutBatch(), &due);
    if (heartbeat && !due) {
      std::lock_guard lock(mu_);
      heartbeat_due_ = false;
    }
  }
  if (!message) return;
  message->set_epoch(host_->Epoch());
  {
    std::lock_guard lock(mu_);
    out_ = std::move(*message);
    write_in_flight_ = true;
    finish_after_write_ = finish_after;
  }
  StartWrite(&out_);
}

void WatchStream::RequestFinishLocked(grpc::Status status) {
  if (finish_requested_) return;
  finish_requested_ = true;
  finish_status_ = std::move(status);
}

Status WatchStream::Handle(const pb::WatchRequest& request) {
  if (request.has_hello()) {
    if (session_) return InvalidArgumentError("a second Hello on the same stream");
    return OnHello(request.hello());
  }
  if (!session_) return InvalidArgumentError("the first message must be a Hello");
  if (request.has_ack()) return session_->OnAck(request.ack());
  return InvalidArgumentError("a message that is neither a Hello nor an Ack");
}

Status WatchStream::OnHello(const pb::Hello& hello) {
  if (hello.client_id().empty()) return InvalidArgumentError("hello: client_id is required");
  PORTICO_ASSIGN_OR_RETURN(GatewayScope scope, GatewayScope::FromHello(hello));
  if (scope.roots.empty()) {
    spdlog::warn(
        "sync: gateway {} ({}) names no Gateway and no GatewayClass: it receives only kinds "
        "synced to every gateway",
        hello.name().empty() ? hello.client_id() : hello.name(), peer_);
  }
  SessionIdentity identity = IdentityOf(hello, peer_);
  spdlog::info("sync: gateway {} connected from {} (client {}, {} Gateways{}, from version {})",
               identity.name, peer_, identity.client_id, scope.gateways.size(),
               scope.gateway_class.empty() ? "" : ", class " + scope.gateway_class,
               hello.from_version());
  session_ = host_->OpenSession(id_, hello, std::move(scope), std::move(identity));
  return OkStatus();
}

void WatchStream::Reject(const std::string& reason) {
  host_->CountRejected();
  spdlog::warn("sync: refused the Watch stream from {}: {}", peer_, reason);
  rejection_reason_ = reason.empty() ? "protocol error" : reason;
}

}  // namespace portico::controller::sync
