#include "controller/sync/sync_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace portico::controller::sync {
namespace {

using portico::sync::v1::Event;
using portico::sync::v1::WatchResponse;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Find looks `key` up in a snapshot's sorted objects.
const core::StoredObject* Find(const std::vector<core::StoredObject>& objects,
                               const core::StoreKey& key) {
  auto it = std::lower_bound(
      objects.begin(), objects.end(), key,
      [](const core::StoredObject& object, const core::StoreKey& k) { return object.key < k; });
  return it != objects.end() && it->key == key ? &*it : nullptr;
}

}  // namespace

Digest ToDigest(std::string_view hex) {
  Digest digest{};
  if (hex.size() == 64) {
    bool ok = true;
    for (size_t i = 0; i < 32 && ok; ++i) {
      int hi = HexValue(hex[2 * i]);
      int lo = HexValue(hex[2 * i + 1]);
      ok = hi >= 0 && lo >= 0;
      digest[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    if (ok) return digest;
    digest = {};
  }
  for (size_t i = 0; i < hex.size(); ++i) {
    digest[i % 32] = static_cast<uint8_t>(digest[i % 32] * 31 + static_cast<uint8_t>(hex[i]));
  }
  digest[31] ^= 0xa5;  // folded text never spells a parsed hex digest by accident in practice
  return digest;
}

std::string ToHex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < 32; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

SyncSession::SyncSession(SessionSources sources, GatewayScope scope, SessionIdentity identity,
                         uint64_t from_version, std::string expected_server_id,
                         std::optional<ResumeState> resume)
    : sources_(std::move(sources)),
      scope_(std::move(scope)),
      identity_(std::move(identity)),
      from_version_(from_version),
      expected_server_id_(std::move(expected_server_id)),
      resume_(std::move(resume)) {}

SyncSession::~SyncSession() = default;

void SyncSession::MarkDirty(std::vector<core::StoreKey> keys) {
  if (sources_.on_dirty && !keys.empty()) sources_.on_dirty(std::move(keys));
}

std::optional<WatchResponse> SyncSession::Next(const std::string& server_id, bool ready,
                                               bool* heartbeat_due) {
  if (!ready) return std::nullopt;
  if (cursor_) return NextFromCursor();
  if (!started_) {
    started_ = true;
    Start(server_id);
    if (cursor_) return NextFromCursor();
  }
  if (server_id != server_id_) {
    spdlog::info("sync: gateway {}: server id {} -> {}: sending a snapshot", identity_.name,
                 server_id_, server_id);
    StartSnapshot(server_id);
    return NextFromCursor();
  }
  bool all_acked = acked_ >= client_version_;
  if (*heartbeat_due) {
    uint64_t head = sources_.store->Head();
    if (all_acked && computed_through_ > client_version_) {
      // Batches whose diff was empty for this gateway: move its version forward.
      WatchResponse advance;
      advance.mutable_batch_end()->set_from_version(client_version_);
      advance.mutable_batch_end()->set_to_version(computed_through_);
      unacked_.push_back(Unacked{computed_through_, false, {}, {}});
      {
        std::lock_guard lock(mu_);
        client_version_ = computed_through_;
      }
      sources_.counters->batches.fetch_add(1, std::memory_order_relaxed);
      return advance;
    }
    *heartbeat_due = false;
    WatchResponse heartbeat;
    heartbeat.mutable_heartbeat()->set_server_id(server_id);
    heartbeat.mutable_heartbeat()->set_head(head);
    std::lock_guard lock(mu_);
    heartbeat_head_ = head;
    return heartbeat;
  }
  if (!all_acked) return std::nullopt;  // one unacked batch per stream; changes coalesce
  if (sources_.store->Head() <= computed_through_ &&
      sources_.links->Generation() == links_generation_) {
    return std::nullopt;
  }
  BuildBatch(server_id);
  if (cursor_) return NextFromCursor();
  return std::nullopt;
}

void SyncSession::Start(const std::string& server_id) {
  bool resumable = resume_ && from_version_ != 0 && expected_server_id_ == server_id &&
                   resume_->server_id == server_id && resume_->client_id == identity_.client_id &&
                   resume_->scope == scope_ && resume_->client_version == from_version_ &&
                   from_version_ <= sources_.store->Head();
  if (!resumable) {
    spdlog::info("sync: gateway {} ({}): snapshot (from version {}, server id \"{}\")",
                 identity_.name, identity_.peer, from_version_, expected_server_id_);
    resume_.reset();
    StartSnapshot(server_id);
    return;
  }
  spdlog::info("sync: gateway {} ({}): resuming from version {}", identity_.name, identity_.peer,
               from_version_);
  computed_through_ = resume_->computed_through;
  links_generation_ = resume_->links_generation;
  {
    std::lock_guard lock(mu_);
    server_id_ = server_id;
    phase_ = "live";
    client_version_ = from_version_;
    acked_ = from_version_;
    held_ = std::move(resume_->held);
    nacked_ = std::move(resume_->nacked);
    no_handler_ = std::move(resume_->no_handler);
  }
  resume_.reset();
  MarkDirty(AllKeys());
}

void SyncSession::StartSnapshot(const std::string& server_id) {
  uint64_t generation = sources_.links->Generation();
  core::StoreSnapshot snapshot = sources_.store->Snapshot();
  ScopeEvaluator evaluator(scope_, *sources_.policies, *sources_.links,
                           [&](const core::StoreKey& key) {
                             const core::StoredObject* o = Find(snapshot.objects, key);
                             return o != nullptr && o->json != nullptr;
                           });
  evaluator.PrecomputeAttached();

  std::unordered_map<core::StoreKey, Held> held;
  std::unordered_set<core::StoreKey> no_handler;
  std::unordered_map<core::StoreKey, std::optional<Digest>> previous;
  std::vector<core::StoreKey> dirty;
  std::vector<OutEvent> events;
  std::vector<core::StoreKey> forgotten;  // nacks whose object changed or went away
  // Every decision first: sending moves an object's JSON out of the snapshot, and a later
  // object's decision may read an earlier one's view (a Webhook synced "toReferrers" is sent
  // where its HTTPRoute, sorted before it, is).
  std::vector<Delivery> deliveries(snapshot.objects.size(), Delivery::kOutOfScope);
  for (size_t i = 0; i < snapshot.objects.size(); ++i) {
    if (snapshot.objects[i].json != nullptr)
      deliveries[i] = evaluator.Decide(snapshot.objects[i].key);
  }
  for (size_t i = 0; i < snapshot.objects.size(); ++i) {
    core::StoredObject& object = snapshot.objects[i];
    if (object.json == nullptr) continue;
    const Delivery delivery = deliveries[i];
    if (delivery == Delivery::kNoHandler) no_handler.insert(object.key);
    auto nacked = nacked_.find(object.key);
    if (nacked != nacked_.end() && nacked->second.hash != object.hash) {
      forgotten.push_back(object.key);
      nacked = nacked_.end();
    }
    if (delivery != Delivery::kSend) continue;
    if (nacked != nacked_.end()) continue;  // never resend a nacked hash
    Digest digest = ToDigest(object.hash);
    if (auto h = held_.find(object.key); h != held_.end() && h->second.hash != digest) {
      previous.emplace(object.key, h->second.hash);
    }
    held.emplace(object.key, Held{digest, snapshot.version});
    OutEvent& e = events.emplace_back();
    e.op = Event::OP_UPSERT;
    e.key = object.key;
    e.hash = std::move(object.hash);
    e.json = std::move(object.json);
    e.version = object.version;
  }
  for (const auto& [key, nack] : nacked_) {
    // Gone, or without a synced view (sent objects were moved from, but those are not nacked
    // with their current hash: at worst listed twice).
    const core::StoredObject* o = Find(snapshot.objects, key);
    if (o == nullptr || (o->json == nullptr && o->hash.empty())) forgotten.push_back(key);
  }
  for (const auto& [key, h] : held_) dirty.push_back(key);
  for (const auto& [key, h] : held) dirty.push_back(key);
  for (const core::StoreKey& key : no_handler_) dirty.push_back(key);
  for (const core::StoreKey& key : no_handler) dirty.push_back(key);
  for (const core::StoreKey& key : forgotten) dirty.push_back(key);
  {
    std::lock_guard lock(mu_);
    server_id_ = server_id;
    phase_ = "snapshot";
    held_ = std::move(held);
    no_handler_ = std::move(no_handler);
    for (const core::StoreKey& key : forgotten) nacked_.erase(key);
    client_version_ = snapshot.version;
  }
  computed_through_ = snapshot.version;
  links_generation_ = generation;
  Unacked unacked;
  unacked.end = snapshot.version;
  unacked.all = true;
  unacked.previous = std::move(previous);
  unacked_.push_back(std::move(unacked));

  WatchResponse end;
  end.mutable_snapshot_end()->set_version(snapshot.version);
  end.mutable_snapshot_end()->set_server_id(server_id);
  cursor_.emplace(Cursor{true,
                         EventChunker(std::move(events), MessageBudget(sources_.max_message_bytes)),
                         std::move(end)});
  MarkDirty(std::move(dirty));
}

void SyncSession::BuildBatch(const std::string& server_id) {
  uint64_t generation = sources_.links->Generation();
  Diff diff;
  if (generation != links_generation_) {
    FullDiff(generation, &diff);
    FinishBatch(std::move(diff));
    return;
  }
  StatusOr<core::ChangeSet> changes = sources_.store->Changes(computed_through_);
  if (!changes.ok() || changes->relist) {
    spdlog::info("sync: gateway {}: version {} is no longer in the log: sending a snapshot",
                 identity_.name, computed_through_);
    StartSnapshot(server_id);
    return;
  }
  diff.to_version = changes->head;

  // The changed keys, then (transitively) what they reference: a TO_REFERRERS object's scope
  // follows its referrers' synced views.
  std::unordered_map<core::StoreKey, const core::StoreEvent*> changed;
  std::vector<core::StoreKey> order;
  for (const core::StoreEvent& event : changes->events) {
    changed.emplace(event.key, &event);
    order.push_back(event.key);
  }
  std::unordered_set<core::StoreKey> listed(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i) {
    for (core::StoreKey& ref : sources_.links->ReferencesOf(order[i])) {
      if (listed.insert(ref).second) order.push_back(std::move(ref));
    }
  }
  // Current objects of the keys not in the change set, read once.
  std::unordered_map<core::StoreKey, std::optional<core::StoredObject>> looked_up;
  auto lookup = [&](const core::StoreKey& key) -> const core::StoredObject* {
    auto it = looked_up.find(key);
    if (it == looked_up.end()) it = looked_up.emplace(key, sources_.store->Get(key)).first;
    return it->second ? &*it->second : nullptr;
  };
  std::unordered_map<core::StoreKey, core::StoredObject> from_events;
  auto current = [&](const core::StoreKey& key) -> const core::StoredObject* {
    auto c = changed.find(key);
    if (c == changed.end()) return lookup(key);
    const core::StoreEvent& event = *c->second;
    if (event.op == core::StoreOp::kDelete) return nullptr;
    auto it = from_events.find(key);
    if (it == from_events.end()) {
      it = from_events
               .emplace(key, core::StoredObject{event.key, event.json, event.hash, event.version})
               .first;
    }
    return &it->second;
  };
  ScopeEvaluator evaluator(scope_, *sources_.policies, *sources_.links,
                           [&](const core::StoreKey& key) {
                             const core::StoredObject* o = current(key);
                             return o != nullptr && o->json != nullptr;
                           });
  for (const core::StoreKey& key : order) {
    const core::StoredObject* object = current(key);
    if (object != nullptr && object->json == nullptr) object = nullptr;
    Delivery delivery = object != nullptr ? evaluator.Decide(key) : Delivery::kOutOfScope;
    auto c = changed.find(key);
    uint64_t version = c != changed.end() ? c->second->version : diff.to_version;
    DiffKey(key, object, delivery, version, &diff);
  }
  FinishBatch(std::move(diff));
}

void SyncSession::FullDiff(uint64_t generation, Diff* diff) {
  core::StoreSnapshot snapshot = sources_.store->Snapshot();
  diff->to_version = snapshot.version;
  ScopeEvaluator evaluator(scope_, *sources_.policies, *sources_.links,
                           [&](const core::StoreKey& key) {
                             const core::StoredObject* o = Find(snapshot.objects, key);
                             return o != nullptr && o->json != nullptr;
                           });
  evaluator.PrecomputeAttached();
  std::vector<core::StoreKey> gone;
  for (const auto& [key, h] : held_) {
    if (Find(snapshot.objects, key) == nullptr) gone.push_back(key);
  }
  for (const core::StoredObject& object : snapshot.objects) {
    if (object.json == nullptr) {
      DiffKey(object.key, nullptr, Delivery::kOutOfScope, snapshot.version, diff);
      continue;
    }
    DiffKey(object.key, &object, evaluator.Decide(object.key), snapshot.version, diff);
  }
  for (const core::StoreKey& key : gone) {
    DiffKey(key, nullptr, Delivery::kOutOfScope, snapshot.version, diff);
  }
  links_generation_ = generation;
}

void SyncSession::DiffKey(const core::StoreKey& key, const core::StoredObject* object,
                          Delivery delivery, uint64_t version, Diff* diff) {
  bool no_handler = object != nullptr && delivery == Delivery::kNoHandler;
  if (no_handler != no_handler_.contains(key)) {
    std::lock_guard lock(mu_);
    if (no_handler) {
      no_handler_.insert(key);
    } else {
      no_handler_.erase(key);
    }
    diff->dirty.push_back(key);
  }
  auto nacked = nacked_.find(key);
  if (nacked != nacked_.end() && (object == nullptr || nacked->second.hash != object->hash)) {
    {
      std::lock_guard lock(mu_);
      nacked_.erase(nacked);
    }
    nacked = nacked_.end();
    diff->dirty.push_back(key);
  }
  auto held = held_.find(key);
  if (object != nullptr && delivery == Delivery::kSend) {
    if (nacked != nacked_.end()) return;  // this hash was nacked: never resend it
    Digest digest = ToDigest(object->hash);
    if (held != held_.end() && held->second.hash == digest) return;
    diff->previous.emplace(
        key, held != held_.end() ? std::optional<Digest>(held->second.hash) : std::nullopt);
    {
      std::lock_guard lock(mu_);
      held_[key] = Held{digest, diff->to_version};
    }
    OutEvent& e = diff->events.emplace_back();
    e.op = Event::OP_UPSERT;
    e.key = key;
    e.hash = object->hash;
    e.json = object->json;
    e.version = object->version;
    diff->sent_keys.push_back(key);
    diff->dirty.push_back(key);
    return;
  }
  if (held == held_.end()) return;
  diff->previous.emplace(key, held->second.hash);
  OutEvent& e = diff->events.emplace_back();
  e.op = Event::OP_DELETE;
  e.key = key;
  e.hash = ToHex(held->second.hash);
  e.version = version;
  {
    std::lock_guard lock(mu_);
    held_.erase(held);
  }
  diff->sent_keys.push_back(key);
  diff->dirty.push_back(key);
}

void SyncSession::FinishBatch(Diff diff) {
  computed_through_ = std::max(computed_through_, diff.to_version);
  if (!diff.events.empty()) {
    WatchResponse end;
    end.mutable_batch_end()->set_from_version(client_version_);
    end.mutable_batch_end()->set_to_version(diff.to_version);
    {
      std::lock_guard lock(mu_);
      client_version_ = diff.to_version;
      phase_ = "live";
    }
    unacked_.push_back(
        Unacked{diff.to_version, false, std::move(diff.sent_keys), std::move(diff.previous)});
    cursor_.emplace(Cursor{
        false, EventChunker(std::move(diff.events), MessageBudget(sources_.max_message_bytes)),
        std::move(end)});
  } else if (phase_ != "live") {
    std::lock_guard lock(mu_);
    phase_ = "live";
  }
  MarkDirty(std::move(diff.dirty));
}

WatchResponse SyncSession::NextFromCursor() {
  WatchResponse out;
  if (!cursor_->events.Done()) {
    size_t added = cursor_->snapshot
                       ? cursor_->events.Fill(out.mutable_snapshot()->mutable_events())
                       : cursor_->events.Fill(out.mutable_batch()->mutable_events());
    sources_.counters->events.fetch_add(added, std::memory_order_relaxed);
    return out;
  }
  out = std::move(cursor_->end);
  uint64_t end =
      out.has_snapshot_end() ? out.snapshot_end().version() : out.batch_end().to_version();
  (cursor_->snapshot ? sources_.counters->snapshots : sources_.counters->batches)
      .fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    if (cursor_->snapshot) phase_ = "live";
    heartbeat_head_ = std::max(heartbeat_head_, end);
  }
  cursor_.reset();
  return out;
}

Status SyncSession::OnAck(const portico::sync::v1::Ack& ack) {
  if (ack.version() > client_version_) {
    return InvalidArgumentError("ack: version " + std::to_string(ack.version()) +
                                " is beyond the last version sent, " +
                                std::to_string(client_version_));
  }
  sources_.counters->acks.fetch_add(1, std::memory_order_relaxed);
  std::vector<core::StoreKey> dirty;
  for (const portico::sync::v1::Nack& nack : ack.nacks()) {
    core::StoreKey key = FromProtoKey(nack.key());
    if (Status valid = key.Validate(); !valid.ok()) {
      return InvalidArgumentError("ack: nack: " + valid.message());
    }
    sources_.counters->nacks.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("sync: gateway {} rejected {} ({}): {}", identity_.name, key.ToString(),
                 nack.hash(), nack.reason());
    // The gateway keeps its last good version: what it held before the batch that sent this.
    std::optional<std::optional<Digest>> previous;
    for (auto it = unacked_.rbegin(); it != unacked_.rend() && !previous; ++it) {
      if (it->end > ack.version()) continue;
      if (auto p = it->previous.find(key); p != it->previous.end()) previous = p->second;
    }
    Digest nacked_digest = ToDigest(nack.hash());
    std::lock_guard lock(mu_);
    nacked_[key] = Nacked{nack.hash(), nack.reason()};
    auto held = held_.find(key);
    if (previous) {
      if (*previous) {
        held_[key] = Held{**previous, 0};
      } else if (held != held_.end()) {
        held_.erase(held);
      }
    } else if (held != held_.end() && held->second.hash == nacked_digest) {
      held_.erase(held);
    }
    dirty.push_back(std::move(key));
  }
  {
    std::lock_guard lock(mu_);
    acked_ = std::max(acked_, ack.version());
  }
  while (!unacked_.empty() && unacked_.front().end <= acked_) {
    Unacked& done = unacked_.front();
    if (done.all) {
      std::lock_guard lock(mu_);
      for (const auto& [key, h] : held_) dirty.push_back(key);
    } else {
      for (core::StoreKey& key : done.keys) dirty.push_back(std::move(key));
    }
    unacked_.pop_front();
  }
  MarkDirty(std::move(dirty));
  return OkStatus();
}

std::optional<ResumeState> SyncSession::TakeResumeState() {
  if (!started_ || cursor_ || acked_ < client_version_ || server_id_.empty()) return std::nullopt;
  ResumeState state;
  state.client_id = identity_.client_id;
  state.scope = scope_;
  state.server_id = server_id_;
  state.client_version = client_version_;
  state.computed_through = computed_through_;
  state.links_generation = links_generation_;
  std::lock_guard lock(mu_);
  state.held = held_;
  state.nacked = nacked_;
  state.no_handler = no_handler_;
  return state;
}

std::vector<core::StoreKey> SyncSession::AllKeys() const {
  std::vector<core::StoreKey> keys(scope_.roots.begin(), scope_.roots.end());
  std::lock_guard lock(mu_);
  keys.reserve(keys.size() + held_.size() + nacked_.size() + no_handler_.size());
  for (const auto& [key, h] : held_) keys.push_back(key);
  for (const auto& [key, n] : nacked_) keys.push_back(key);
  for (const core::StoreKey& key : no_handler_) keys.push_back(key);
  return keys;
}

GatewayKeyState SyncSession::StateOf(const core::StoreKey& key, std::string_view hash) const {
  GatewayKeyState state;
  std::lock_guard lock(mu_);
  if (auto n = nacked_.find(key); n != nacked_.end() && n->second.hash == hash) {
    state.status = KeyStatus::kRejected;
    state.reason = n->second.reason;
    return state;
  }
  if (auto h = held_.find(key); h != held_.end()) {
    bool current = h->second.hash == ToDigest(hash);
    state.status =
        current && acked_ >= h->second.sent_version ? KeyStatus::kApplied : KeyStatus::kPending;
    return state;
  }
  if (no_handler_.contains(key)) state.status = KeyStatus::kNoHandler;
  return state;
}

bool SyncSession::Serves(const core::StoreKey& key) const {
  if (scope_.gateways.contains(key)) return true;
  if (scope_.gateway_class.empty()) return false;
  return scope_.Serves(key, sources_.links->ParentsOf(key));
}

ConnectedGateway SyncSession::View() const {
  ConnectedGateway view;
  view.name = identity_.name;
  view.client_id = identity_.client_id;
  view.peer = identity_.peer;
  for (const core::StoreKey& g : scope_.gateways) {
    view.gateways.push_back(g.ns.empty() ? g.name : g.ns + "/" + g.name);
  }
  view.gateway_class = scope_.gateway_class;
  view.addresses = identity_.addresses;
  view.connected_unix_ms = identity_.connected_unix_ms;
  view.plugins = identity_.plugins;
  uint64_t head = sources_.store->Head();
  std::lock_guard lock(mu_);
  view.state = phase_;
  view.acked_version = acked_;
  view.sent_version = client_version_;
  view.head = heartbeat_head_;
  view.lag = head > acked_ ? head - acked_ : 0;
  view.synced_objects = held_.size();
  for (const auto& [key, nack] : nacked_) {
    view.nacks.push_back(GatewayNack{key.ToString(), nack.hash, nack.reason});
  }
  std::sort(view.nacks.begin(), view.nacks.end(),
            [](const GatewayNack& a, const GatewayNack& b) { return a.key < b.key; });
  return view;
}

std::map<std::string, std::string> SyncSession::Synced() const {
  std::map<std::string, std::string> out;
  std::lock_guard lock(mu_);
  for (const auto& [key, h] : held_) out.emplace(key.ToString(), ToHex(h.hash));
  return out;
}

uint64_t SyncSession::acked_version() const {
  std::lock_guard lock(mu_);
  return acked_;
}

}  // namespace portico::controller::sync
