// watch_stream.h: WatchStream, one ConfigSync Watch call (one gateway's stream), and
// WatchStreamHost, what a stream asks of the server that owns it.
//
// gRPC's callbacks (OnReadDone, OnWriteDone, OnCancel) only record what happened and schedule
// the stream; Pump, run by a sync worker (pump_pool.h), handles what was read (the Hello opens a
// SyncSession, acks go to it) and writes at most one message at a time: a rejection, or the
// session's next snapshot part, batch or heartbeat, stamped with the host's epoch. A protocol
// error sends Rejected{reason} and then ends the stream with INVALID_ARGUMENT.
//
// Thread-safety: the gRPC callbacks and MarkScheduled/MarkHeartbeat may run on any thread; Pump
// runs on one worker at a time per stream (a pump requested while one runs makes it loop once
// more). Ownership: the server holds each stream in a shared_ptr until OnDone, which hands the
// stream's session back through WatchStreamHost::OnStreamDone; the host must outlive its streams.
#ifndef PORTICO_CONTROLLER_SYNC_WATCH_STREAM_H_
#define PORTICO_CONTROLLER_SYNC_WATCH_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "controller/sync/sync_scope.h"
#include "controller/sync/sync_session.h"
#include "portico/sdk/status.h"
#include "portico/sync/v1/sync.grpc.pb.h"

namespace portico::controller::sync {

class WatchStream;

// WatchStreamHost is the server side of a stream. Every method may be called from any sync
// worker or gRPC thread.
class WatchStreamHost {
 public:
  virtual ~WatchStreamHost() = default;
  // Schedule queues `stream` for a pump (nothing when it is queued already).
  virtual void Schedule(const std::shared_ptr<WatchStream>& stream) = 0;
  // OpenSession starts the session of stream `stream_id`, whose Hello was accepted: it resumes
  // what the same client left, when the server still holds it.
  virtual std::shared_ptr<SyncSession> OpenSession(uint64_t stream_id,
                                                   const portico::sync::v1::Hello& hello,
                                                   GatewayScope scope,
                                                   SessionIdentity identity) = 0;
  // OnStreamDone: gRPC is done with stream `stream_id`; `session` is null when no Hello came.
  virtual void OnStreamDone(uint64_t stream_id, std::shared_ptr<SyncSession> session) = 0;
  // What the next message needs: the server id, the leader epoch, and whether a batch may be
  // cut now (the controller is ready and settled).
  virtual std::string ServerId() const = 0;
  virtual uint64_t Epoch() const = 0;
  virtual bool MayCutBatch() = 0;
  // CountRejected counts a stream refused for a protocol error.
  virtual void CountRejected() = 0;
};

class WatchStream final : public grpc::ServerBidiReactor<portico::sync::v1::WatchRequest,
                                                         portico::sync::v1::WatchResponse>,
                          public std::enable_shared_from_this<WatchStream> {
 public:
  WatchStream(WatchStreamHost* host, uint64_t id, std::string peer)
      : host_(host), id_(id), peer_(std::move(peer)) {}

  // Begin starts the first read; call once, after the server holds the stream.
  void Begin() { StartRead(&request_); }

  // MarkScheduled: true when the caller must queue the stream (it was not queued already).
  bool MarkScheduled();
  // MarkHeartbeat asks the next pump to send a heartbeat if nothing else is due.
  void MarkHeartbeat();
  // Pump handles what was read and writes the next message (see the file comment).
  void Pump();

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void RequestFinishLocked(grpc::Status status);
  Status Handle(const portico::sync::v1::WatchRequest& request);
  Status OnHello(const portico::sync::v1::Hello& hello);
  void Reject(const std::string& reason);
  // WriteNext starts the next write, if one is due (Pump, with no write in flight).
  void WriteNext(bool heartbeat);

  WatchStreamHost* const host_;
  const uint64_t id_;
  const std::string peer_;

  // Pump-only (and OnDone, after the last pump).
  std::shared_ptr<SyncSession> session_;
  std::string rejection_reason_;
  bool rejection_sent_ = false;

  std::mutex mu_;
  bool scheduled_ = false;                   // guarded by mu_
  bool pumping_ = false;                     // guarded by mu_
  bool repump_ = false;                      // guarded by mu_
  bool read_ready_ = false;                  // guarded by mu_
  bool write_in_flight_ = false;             // guarded by mu_
  bool finish_after_write_ = false;          // guarded by mu_
  bool finish_requested_ = false;            // guarded by mu_
  bool finish_called_ = false;               // guarded by mu_
  bool heartbeat_due_ = false;               // guarded by mu_
  grpc::Status finish_status_;               // guarded by mu_
  portico::sync::v1::WatchRequest request_;  // gRPC reads into it while a read is outstanding
  portico::sync::v1::WatchResponse out_;     // gRPC writes from it while a write is in flight
};

}  // namespace portico::controller::sync

#endif  // PORTICO_CONTROLLER_SYNC_WATCH_STREAM_H_
