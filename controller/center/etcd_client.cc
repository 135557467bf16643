#include "controller/center/etcd_client.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "controller/center/file_documents.h"

namespace portico::controller {
namespace {

StatusCode CodeOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return StatusCode::kOk;
    case grpc::StatusCode::CANCELLED:
      return StatusCode::kCancelled;
    case grpc::StatusCode::INVALID_ARGUMENT:
      return StatusCode::kInvalidArgument;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return StatusCode::kDeadlineExceeded;
    case grpc::StatusCode::NOT_FOUND:
      return StatusCode::kNotFound;
    case grpc::StatusCode::ALREADY_EXISTS:
      return StatusCode::kAlreadyExists;
    case grpc::StatusCode::PERMISSION_DENIED:
      return StatusCode::kPermissionDenied;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return StatusCode::kResourceExhausted;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return StatusCode::kFailedPrecondition;
    case grpc::StatusCode::ABORTED:
      return StatusCode::kAborted;
    case grpc::StatusCode::OUT_OF_RANGE:
      return StatusCode::kOutOfRange;
    case grpc::StatusCode::UNIMPLEMENTED:
      return StatusCode::kUnimplemented;
    case grpc::StatusCode::UNAVAILABLE:
      return StatusCode::kUnavailable;
    case grpc::StatusCode::DATA_LOSS:
      return StatusCode::kDataLoss;
    case grpc::StatusCode::UNAUTHENTICATED:
      return StatusCode::kUnauthenticated;
    default:
      return StatusCode::kInternal;
  }
}

// Retryable elsewhere: the endpoint is down or slow (not an answer about the request).
bool EndpointFailure(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// etcd answers a stale or unknown simple token with "etcdserver: invalid auth token".
bool InvalidToken(const grpc::Status& status) {
  return status.error_message().find("invalid auth token") != std::string::npos;
}

std::string TargetOf(const std::string& endpoint, bool* tls) {
  std::string target = endpoint;
  if (target.starts_with("https://")) {
    *tls = true;
    target = target.substr(8);
  } else if (target.starts_with("http://")) {
    target = target.substr(7);
  }
  while (!target.empty() && target.back() == '/') target.pop_back();
  return target;
}

}  // namespace

Status EtcdStatus(const grpc::Status& status, const std::string& endpoint, const char* call) {
  std::string name = grpc::StatusCode::UNAVAILABLE == status.error_code() ? "UNAVAILABLE"
                     : status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                         ? "DEADLINE_EXCEEDED"
                         : std::string(StatusCodeName(CodeOf(status.error_code())));
  return Status(CodeOf(status.error_code()),
                "etcd " + endpoint + ": " + call + ": " + name + ": " + status.error_message());
}

StatusOr<std::vector<mvccpb::KeyValue>> RangePrefix(EtcdClient& client, const std::string& prefix,
                                                    int64_t page_size, int64_t* revision) {
  std::vector<mvccpb::KeyValue> kvs;
  *revision = 0;
  etcdserverpb::RangeRequest request;
  request.set_key(prefix);
  request.set_range_end(EtcdClient::PrefixRangeEnd(prefix));
  request.set_limit(page_size);
  while (true) {
    PORTICO_ASSIGN_OR_RETURN(etcdserverpb::RangeResponse page, client.Range(request));
    if (*revision == 0) {
      *revision = page.header().revision();
      request.set_revision(*revision);  // every page from the same point in time
    }
    for (mvccpb::KeyValue& kv : *page.mutable_kvs()) kvs.push_back(std::move(kv));
    if (!page.more() || kvs.empty()) break;
    request.set_key(kvs.back().key() + '\0');
  }
  return kvs;
}

StatusOr<std::string> ReadEtcdPassword(const std::string& password,
                                       const std::filesystem::path& password_file) {
  if (password_file.empty()) return password;
  StatusOr<std::string> text = ReadFileText(password_file, 64 << 10);
  if (!text.ok()) {
    return InvalidArgumentError("etcd password_file " + password_file.string() + ": " +
                                text.status().message());
  }
  return text->substr(0, text->find_first_of("\r\n"));
}

StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(EtcdClientOptions options) {
  if (options.endpoints.empty()) return InvalidArgumentError("etcd: no endpoints given");
  if (options.cert_file.empty() != options.key_file.empty()) {
    return InvalidArgumentError("etcd: cert_file and key_file go together");
  }
  std::unique_ptr<EtcdClient> client(new EtcdClient(std::move(options)));
  const EtcdClientOptions& o = client->options_;
  grpc::SslCredentialsOptions ssl;
  auto read = [](const std::filesystem::path& path, const char* what) -> StatusOr<std::string> {
    StatusOr<std::string> text = ReadFileText(path, 1 << 20);
    if (!text.ok()) {
      return InvalidArgumentError(std::string("etcd ") + what + " " + path.string() + ": " +
                                  text.status().message());
    }
    return text;
  };
  if (!o.ca_file.empty()) {
    PORTICO_ASSIGN_OR_RETURN(ssl.pem_root_certs, read(o.ca_file, "ca_file"));
  }
  if (!o.cert_file.empty()) {
    PORTICO_ASSIGN_OR_RETURN(ssl.pem_cert_chain, read(o.cert_file, "cert_file"));
    PORTICO_ASSIGN_OR_RETURN(ssl.pem_private_key, read(o.key_file, "key_file"));
  }
  grpc::ChannelArguments args;
  // A dead etcd is noticed by keepalive (etcd refuses pings more often than every 5 s), and a
  // restarted one is reconnected to quickly.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
  // The minimum is also the connect timeout: long enough for a TLS handshake with a loaded
  // etcd, short enough that a connection accepted by a starting etcd is retried soon.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2'000);
  args.SetMaxReceiveMessageSize(64 << 20);
  for (const std::string& endpoint : o.endpoints) {
    bool tls = !o.ca_file.empty();
    std::string target = TargetOf(endpoint, &tls);
    if (target.empty()) return InvalidArgumentError("etcd: empty endpoint in the list");
    std::shared_ptr<grpc::ChannelCredentials> credentials =
        tls ? grpc::SslCredentials(ssl) : grpc::InsecureChannelCredentials();
    std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(target, credentials, args);
    client->endpoints_.push_back(Member{target, channel, etcdserverpb::KV::NewStub(channel),
                                        etcdserverpb::Lease::NewStub(channel), ""});
  }
  return client;
}

std::string EtcdClient::PrefixRangeEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

std::string EtcdClient::Endpoint() const {
  std::lock_guard lock(mu_);
  return endpoints_[current_].target;
}

std::string EtcdClient::Describe() const {
  std::string out = "etcd:";
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    out += (i ? "," : "") + endpoints_[i].target;
  }
  return out;
}

void EtcdClient::Rotate(size_t from) {
  std::lock_guard lock(mu_);
  if (current_ == from) current_ = (current_ + 1) % endpoints_.size();
}

void EtcdClient::Failed(const std::string& endpoint) {
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    if (endpoints_[i].target == endpoint) Rotate(i);
  }
}

void EtcdClient::ForgetToken(const std::string& endpoint) {
  std::lock_guard lock(mu_);
  for (Member& e : endpoints_) {
    if (e.target == endpoint) e.token.clear();
  }
}

Status EtcdClient::Authenticate(size_t index) {
  Member& e = endpoints_[index];
  etcdserverpb::AuthenticateRequest request;
  request.set_name(options_.user);
  request.set_password(options_.password);
  etcdserverpb::AuthenticateResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.call_timeout);
  grpc::Status status =
      etcdserverpb::Auth::NewStub(e.channel)->Authenticate(&context, request, &response);
  if (!status.ok()) return EtcdStatus(status, e.target, "Authenticate");
  std::lock_guard lock(mu_);
  e.token = response.token();
  return OkStatus();
}

Status EtcdClient::Prepare(size_t index, grpc::ClientContext* context, bool deadline) {
  if (deadline) {
    context->set_deadline(std::chrono::system_clock::now() + options_.call_timeout);
    // Wait for a connection within the deadline rather than failing at once while the channel
    // is between connection attempts (a restarting etcd).
    context->set_wait_for_ready(true);
  }
  if (options_.user.empty()) return OkStatus();
  std::string token;
  {
    std::lock_guard lock(mu_);
    token = endpoints_[index].token;
  }
  if (token.empty()) {
    PORTICO_RETURN_IF_ERROR(Authenticate(index));
    std::lock_guard lock(mu_);
    token = endpoints_[index].token;
  }
  context->AddMetadata("token", token);
  return OkStatus();
}

template <typename Response, typename Rpc>
StatusOr<Response> EtcdClient::Call(const char* name, Rpc rpc) {
  size_t start;
  {
    std::lock_guard lock(mu_);
    start = current_;
  }
  Status last;
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    size_t index = (start + attempt) % endpoints_.size();
    Member& e = endpoints_[index];
    for (int auth_try = 0; auth_try < 2; ++auth_try) {
      grpc::ClientContext context;
      Status prepared = Prepare(index, &context, true);
      if (!prepared.ok()) {
        last = prepared;
        break;
      }
      Response response;
      grpc::Status status = rpc(e, &context, &response);
      if (status.ok()) {
        if (attempt > 0) {
          std::lock_guard lock(mu_);
          current_ = index;
        }
        return response;
      }
      last = EtcdStatus(status, e.target, name);
      if (InvalidToken(status) && auth_try == 0) {
        std::lock_guard lock(mu_);
        e.token.clear();
        continue;
      }
      if (!EndpointFailure(status)) return last;
      break;
    }
    if (last.code() != StatusCode::kUnavailable && last.code() != StatusCode::kDeadlineExceeded) {
      return last;  // e.g. a refused password
    }
    spdlog::debug("{} (trying the next endpoint)", last.message());
  }
  Rotate(start);
  return last;
}

StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(const etcdserverpb::RangeRequest& r) {
  return Call<etcdserverpb::RangeResponse>(
      "Range", [&](const Member& m, grpc::ClientContext* c, etcdserverpb::RangeResponse* out) {
        return m.kv->Range(c, r, out);
      });
}

StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& r) {
  return Call<etcdserverpb::TxnResponse>(
      "Txn", [&](const Member& m, grpc::ClientContext* c, etcdserverpb::TxnResponse* out) {
        return m.kv->Txn(c, r, out);
      });
}

StatusOr<etcdserverpb::PutResponse> EtcdClient::Put(const etcdserverpb::PutRequest& r) {
  return Call<etcdserverpb::PutResponse>(
      "Put", [&](const Member& m, grpc::ClientContext* c, etcdserverpb::PutResponse* out) {
        return m.kv->Put(c, r, out);
      });
}

StatusOr<etcdserverpb::CompactionResponse> EtcdClient::Compact(
    const etcdserverpb::CompactionRequest& r) {
  return Call<etcdserverpb::CompactionResponse>(
      "Compact", [&](const Member& m, grpc::ClientContext* c,
                     etcdserverpb::CompactionResponse* out) { return m.kv->Compact(c, r, out); });
}

StatusOr<etcdserverpb::LeaseGrantResponse> EtcdClient::LeaseGrant(
    const etcdserverpb::LeaseGrantRequest& r) {
  return Call<etcdserverpb::LeaseGrantResponse>(
      "LeaseGrant",
      [&](const Member& m, grpc::ClientContext* c, etcdserverpb::LeaseGrantResponse* out) {
        return m.lease->LeaseGrant(c, r, out);
      });
}

StatusOr<etcdserverpb::LeaseRevokeResponse> EtcdClient::LeaseRevoke(
    const etcdserverpb::LeaseRevokeRequest& r) {
  return Call<etcdserverpb::LeaseRevokeResponse>(
      "LeaseRevoke",
      [&](const Member& m, grpc::ClientContext* c, etcdserverpb::LeaseRevokeResponse* out) {
        return m.lease->LeaseRevoke(c, r, out);
      });
}

StatusOr<etcdserverpb::LeaseTimeToLiveResponse> EtcdClient::LeaseTimeToLive(
    const etcdserverpb::LeaseTimeToLiveRequest& r) {
  return Call<etcdserverpb::LeaseTimeToLiveResponse>(
      "LeaseTimeToLive",
      [&](const Member& m, grpc::ClientContext* c, etcdserverpb::LeaseTimeToLiveResponse* out) {
        return m.lease->LeaseTimeToLive(c, r, out);
      });
}

StatusOr<etcdserverpb::LeaseKeepAliveResponse> EtcdClient::LeaseKeepAliveOnce(int64_t lease_id) {
  return Call<etcdserverpb::LeaseKeepAliveResponse>(
      "LeaseKeepAlive",
      [&](const Member& m, grpc::ClientContext* c, etcdserverpb::LeaseKeepAliveResponse* out) {
        auto stream = m.lease->LeaseKeepAlive(c);
        etcdserverpb::LeaseKeepAliveRequest request;
        request.set_id(lease_id);
        bool answered = stream->Write(request) && stream->Read(out);
        stream->WritesDone();
        if (!answered) c->TryCancel();
        grpc::Status status = stream->Finish();
        if (answered) return grpc::Status::OK;
        // A stream that ended without an answer (etcd went away) is an endpoint failure.
        return status.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "no keep-alive answer")
                           : status;
      });
}

StatusOr<std::unique_ptr<EtcdWatchStream>> EtcdClient::OpenWatch(
    const etcdserverpb::WatchCreateRequest& create) {
  size_t index;
  {
    std::lock_guard lock(mu_);
    index = current_;
  }
  auto w = std::make_unique<EtcdWatchStream>();
  w->endpoint = endpoints_[index].target;
  w->channel = endpoints_[index].channel;
  w->context = std::make_unique<grpc::ClientContext>();
  Status prepared = Prepare(index, w->context.get(), false);
  if (!prepared.ok()) {
    if (prepared.code() == StatusCode::kUnavailable ||
        prepared.code() == StatusCode::kDeadlineExceeded) {
      Rotate(index);
    }
    return prepared;
  }
  // The stream itself has no deadline: connect first, within the call timeout, so that a dead
  // endpoint is left for the next one.
  if (!w->channel->WaitForConnected(std::chrono::system_clock::now() + options_.call_timeout)) {
    Rotate(index);
    return UnavailableError("etcd " + w->endpoint + ": Watch: UNAVAILABLE: not connected within " +
                            std::to_string(options_.call_timeout.count()) + " ms");
  }
  w->stub = etcdserverpb::Watch::NewStub(w->channel);
  w->stream = w->stub->Watch(w->context.get());
  etcdserverpb::WatchRequest request;
  *request.mutable_create_request() = create;
  if (!w->stream->Write(request)) {
    grpc::Status status = w->stream->Finish();
    Rotate(index);
    return EtcdStatus(status, w->endpoint, "Watch");
  }
  return w;
}

}  // namespace portico::controller
