/*
 * abi.h: the binary boundary between Portico hosts (portico-controller, portico-gateway,
 * portico-ctl) and plugins. Plain C so plugins may be built with another compiler or standard
 * library than the host.
 *
 * Rules (DESIGN.md §3):
 *  - One exported entry per ABI major: `portico_plugin_v1` returns a static descriptor.
 *  - Every struct starts with `struct_size`; structs only grow at the end, so a reader checks
 *    `struct_size` before touching a field added in a later minor version (PORTICO_HAS_FIELD).
 *  - Every hook may be NULL, meaning "not provided".
 *  - Strings are (ptr, len) pairs, not NUL-terminated, valid only for the duration of the call.
 *  - Whatever a plugin hands back goes through host-owned sinks (portico_sink): the host copies,
 *    so neither side ever frees memory the other allocated.
 *  - No exception crosses this boundary: the C++ SDK catches everything and reports a status.
 *  - Payloads (objects, status, exports, contributions) are JSON documents in the formats named
 *    below; they are off the request path, so JSON costs nothing that matters.
 *
 * Threading: hooks of one kind may be called concurrently for *different* objects on controller
 * worker threads; a plugin keeps no mutable global state without its own locking. Gateway
 * handlers are called one batch at a time, on a thread the runtime starts for that batch (not
 * the same thread twice). Filter request hooks run on the worker that owns the request and must
 * not block.
 */
#ifndef PORTICO_SDK_ABI_H_
#define PORTICO_SDK_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PORTICO_ABI_MAJOR 1
#define PORTICO_ABI_MINOR 3

/* The exported entry symbol for ABI major 1, and the ELF section holding the manifest. */
#define PORTICO_ENTRY_V1 "portico_plugin_v1"
#define PORTICO_MANIFEST_SECTION ".portico_manifest"

#if defined(__GNUC__)
#define PORTICO_EXPORT __attribute__((visibility("default")))
#else
#define PORTICO_EXPORT
#endif

/* True when a struct of `struct_size` bytes, as sent by the other side, contains `field`. */
#define PORTICO_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ---------------------------------------------------------------- basic types */

/* portico_str: a borrowed byte range; not NUL-terminated. */
typedef struct portico_str {
  const char* ptr;
  size_t len;
} portico_str;

/* portico_code: gRPC-style status codes, shared with portico::Status. */
typedef enum portico_code {
  PORTICO_OK = 0,
  PORTICO_CANCELLED = 1,
  PORTICO_UNKNOWN = 2,
  PORTICO_INVALID_ARGUMENT = 3,
  PORTICO_DEADLINE_EXCEEDED = 4,
  PORTICO_NOT_FOUND = 5,
  PORTICO_ALREADY_EXISTS = 6,
  PORTICO_PERMISSION_DENIED = 7,
  PORTICO_RESOURCE_EXHAUSTED = 8,
  PORTICO_FAILED_PRECONDITION = 9,
  PORTICO_ABORTED = 10,
  PORTICO_OUT_OF_RANGE = 11,
  PORTICO_UNIMPLEMENTED = 12,
  PORTICO_INTERNAL = 13,
  PORTICO_UNAVAILABLE = 14,
  PORTICO_DATA_LOSS = 15,
  PORTICO_UNAUTHENTICATED = 16
} portico_code;

/* portico_sink: host-owned output. The plugin calls write() zero or more times; the host
 * appends. The sink is valid only during the call that received it. */
typedef struct portico_sink {
  size_t struct_size;
  void* host;
  void (*write)(void* host, portico_str bytes);
} portico_sink;

/* portico_log_level: severity for host logging. */
typedef enum portico_log_level {
  PORTICO_LOG_DEBUG = 0,
  PORTICO_LOG_INFO = 1,
  PORTICO_LOG_WARN = 2,
  PORTICO_LOG_ERROR = 3
} portico_log_level;

/* portico_object_ref: identifies an object. `ns` is empty for cluster-scoped kinds. */
typedef struct portico_object_ref {
  size_t struct_size;
  portico_str group;
  portico_str kind;
  portico_str ns;
  portico_str name;
} portico_object_ref;

/* ---------------------------------------------------------------- controller side */

/* portico_object: one resource handed to a processor, after schema validation and defaults.
 * `json` is the whole object (apiVersion, kind, metadata, spec) without status. */
typedef struct portico_object {
  size_t struct_size;
  portico_object_ref ref;
  portico_str version; /* served version from apiVersion, e.g. "v1" */
  portico_str json;
  int64_t generation;
} portico_object;

/* portico_process_context: host services for one process() call. Every read (get, list,
 * reference check, extension ref, secret), hit or miss, is recorded against the object being
 * processed; a change to what was read requeues it. Valid only during process(). */
typedef struct portico_process_context {
  size_t struct_size;
  void* host;
  /* Writes the export of another object as JSON into `out`. Returns 1 when found, 0 on miss. */
  int (*get_export)(void* host, const portico_object_ref* ref, portico_sink* out);
  /* Writes a JSON array [{"namespace":..,"name":..,"labels":{..},"export":..}] of the exports of
   * every object of (group, kind) in `ns` (empty: all namespaces) whose labels match
   * `label_selector` (Kubernetes selector syntax, empty: everything). Returns the count. */
  int64_t (*list_exports)(void* host, portico_str group, portico_str kind, portico_str ns,
                          portico_str label_selector, portico_sink* out);
  /* Reference policy: may `from` (group, kind, namespace) reference `to`? Answered by the plugin
   * that registered a reference policy (ReferenceGrant); none loaded means denied. 1 allowed. */
  int (*reference_allowed)(void* host, portico_str from_group, portico_str from_kind,
                           portico_str from_ns, const portico_object_ref* to);
  /* Resolves a filter owned by another kind (ExtensionRef). Writes that object's export; 1 when
   * found and the kind is a route filter, 0 otherwise. */
  int (*resolve_extension_ref)(void* host, const portico_object_ref* ref, portico_sink* out);
  /* Writes {"type":..,"data":{key: base64}} of a Secret the host knows. 1 found, 0 miss. */
  int (*get_secret)(void* host, portico_str ns, portico_str name, portico_sink* out);
  void (*log)(void* host, portico_log_level level, portico_str message);
  /* Adds `delta` to a counter named `name` (Prometheus naming) with this kind as label. */
  void (*metric_add)(void* host, portico_str name, double delta);
  /* Wall clock, milliseconds since the Unix epoch (a fake clock under test). */
  int64_t (*now_unix_ms)(void* host);
  /* ABI 1.2 (check PORTICO_HAS_FIELD): writes the synced view this object's last successful
   * run produced, as gateways hold it now, into `out`; 1 when there is one, 0 otherwise (never
   * processed, nothing synced, or the host restarted). Lets a stateless processor keep serving
   * what it served when a new version of its input is unusable (a Secret whose new key does
   * not match its certificate keeps its previous key pair). */
  int (*get_previous_synced)(void* host, portico_sink* out);
} portico_process_context;

/* portico_process_result: host-owned sinks for the four parts of a processing result.
 *  - synced: the view sent to gateways (JSON). Nothing written means nothing is synced. The host
 *    computes its content hash (sha256 of the bytes).
 *  - status: the object's status (JSON, e.g. {"conditions":[..]}); never synced.
 *  - export_: small, secret-free view other kinds may read. Nothing written: no export.
 *  - contribute(): a fact about another object, aggregated by the host into that target's
 *    status without reprocessing it. `topic` is "<op>:<path>"; `path` names a status field by
 *    dotted names and "[key=value]" array-element selectors:
 *      "count:listeners[name=http].attachedRoutes"  adds 1 (or the integer in `json`, if any)
 *      "append:parentsOf"                           appends `json` (any JSON value) to an array
 *    The host starts from the target's own processed status and applies every contribution in
 *    (contributor, topic) order; a path whose field or element does not exist is created for
 *    "append" and skipped for "count" (a processor writes attachedRoutes: 0 for each listener). */
typedef struct portico_process_result {
  size_t struct_size;
  portico_sink synced;
  portico_sink status;
  portico_sink export_;
  void* host;
  void (*contribute)(void* host, const portico_object_ref* target, portico_str topic,
                     portico_str json);
  /* ABI 1.1: declares a sync-scope link from this object to `target` (portico_link_type). Check
   * struct_size (PORTICO_HAS_FIELD) before calling: an ABI 1.0 host has no such member. */
  void (*link)(void* host, const portico_object_ref* target, int type);
} portico_process_result;

/* portico_link_type: how a link decides which gateways receive what (DESIGN.md §5).
 *  PARENT: this object goes to every gateway that holds `target` (a route to its Gateways, a
 *          Gateway to its GatewayClass, a policy to its targets): kinds synced "attached".
 *  REFERENCE: `target`, of a kind synced "toReferrers", goes to every gateway that holds this
 *          object (a Gateway to the Secret whose certificate it serves).
 * A processing run's links replace the object's previous ones. */
typedef enum portico_link_type {
  PORTICO_LINK_PARENT = 0,
  PORTICO_LINK_REFERENCE = 1
} portico_link_type;

/* portico_process_fn: validates and resolves one object. Returns PORTICO_OK, or an error code
 * with a message (naming the field) written to `error`; on error the host keeps the previous
 * result and retries with backoff when the code is UNAVAILABLE or ABORTED. */
typedef portico_code (*portico_process_fn)(void* user, const portico_object* object,
                                           const portico_process_context* ctx,
                                           const portico_process_result* result,
                                           portico_sink* error);

/* portico_sync_policy: where a kind's synced view goes. */
typedef enum portico_sync_policy {
  PORTICO_SYNC_NEVER = 0,        /* stays on the controller (Secret, ReferenceGrant, Namespace) */
  PORTICO_SYNC_ALWAYS = 1,       /* every gateway with a handler for the kind */
  PORTICO_SYNC_TO_REFERRERS = 2, /* only gateways holding an object that references it */
  PORTICO_SYNC_ATTACHED = 3      /* only gateways serving it or holding a parent (links), or
                                    (ABI 1.2) holding an object that references it */
} portico_sync_policy;

/* ---------------------------------------------------------------- gateway side */

/* Versioned contribution formats a handler stages into the runtime (DESIGN.md §4). The JSON
 * shapes are documented in docs/contributions.md; the format string carries the version. */
#define PORTICO_FORMAT_LISTENER_SET "listener_set.v1"
#define PORTICO_FORMAT_ROUTE_RULES "route_rules.v1"
#define PORTICO_FORMAT_BACKEND "backend.v1"
#define PORTICO_FORMAT_CERTIFICATE "certificate.v1"
#define PORTICO_FORMAT_FILTER_BINDING "filter_binding.v1"

/* portico_change_op: what happened to a synced object. */
typedef enum portico_change_op { PORTICO_CHANGE_UPSERT = 0, PORTICO_CHANGE_DELETE = 1 } portico_change_op;

/* portico_change: one synced object in a batch. `json` is the synced view (empty on delete). */
typedef struct portico_change {
  size_t struct_size;
  portico_change_op op;
  portico_object_ref ref;
  portico_str json;
  portico_str hash; /* hex sha256 of json */
} portico_change;

/* portico_txn: the runtime transaction of one sync batch. Contributions are owned by an object
 * key (`owner`, "group/kind/ns/name"); put() replaces the (format, id) entry, clear_owner() drops
 * everything an owner contributed. Valid only during stage(). */
typedef struct portico_txn {
  size_t struct_size;
  void* host;
  portico_code (*put)(void* host, portico_str owner, portico_str format, portico_str id,
                      portico_str json, portico_sink* error);
  void (*remove)(void* host, portico_str owner, portico_str format, portico_str id);
  void (*clear_owner)(void* host, portico_str owner);
  /* Reads another synced object as currently staged in this transaction. 1 found, 0 miss. */
  int (*get_synced)(void* host, const portico_object_ref* ref, portico_sink* out);
  /* Rejects one change: it keeps its last good version and the gateway nacks it. */
  void (*nack)(void* host, const portico_object_ref* ref, portico_str reason);
  void (*log)(void* host, portico_log_level level, portico_str message);
} portico_txn;

/* portico_stage_fn: translates a kind's changes into runtime contributions. Called in `reads`
 * order, once per batch containing the kind; never publishes. */
typedef portico_code (*portico_stage_fn)(void* user, const portico_txn* txn,
                                         const portico_change* changes, size_t count,
                                         portico_sink* error);

/* ---------------------------------------------------------------- filters */

/* portico_filter_phase: where in the request pipeline a filter runs. */
typedef enum portico_filter_phase {
  PORTICO_PHASE_EARLY = 0,
  PORTICO_PHASE_AUTHN = 1,
  PORTICO_PHASE_AUTHZ = 2,
  PORTICO_PHASE_RATELIMIT = 3,
  PORTICO_PHASE_TRANSFORM = 4,
  PORTICO_PHASE_UPSTREAM = 5,
  PORTICO_PHASE_RESPONSE = 6
} portico_filter_phase;

/* portico_filter_status: what a filter hook decided. */
typedef enum portico_filter_status {
  PORTICO_FILTER_CONTINUE = 0, /* go on with the chain */
  PORTICO_FILTER_RESPOND = 1,  /* the filter set a local response through the view */
  PORTICO_FILTER_PENDING = 2,  /* waiting on an outbound call; resumed on the same worker */
  PORTICO_FILTER_ERROR = 3     /* ABI 1.2: the filter failed; the host answers 500 for this
                                  request only (any other value is read the same way) */
} portico_filter_status;

/* portico_http_view: the request or the response a filter hook sees ("distinct views": the
 * request view in on_request/on_upstream_request/call completions, the response view in
 * on_response; on_log gets the request view with status() set). Header names are
 * case-insensitive. Lifetime: the view and every portico_str it returns are valid only during
 * the hook (or completion) call that received it; values passed in are copied by the host. The
 * host owns the view; `host` is opaque. */
typedef struct portico_http_view {
  size_t struct_size;
  void* host;
  portico_str (*method)(void* host);
  portico_str (*path)(void* host); /* request target including the query */
  portico_str (*authority)(void* host);
  int (*status)(void* host);       /* response status; 0 on the request side */
  /* Fetches the n-th value of `name` into *value; 1 when present. */
  int (*header)(void* host, portico_str name, size_t n, portico_str* value);
  void (*set_header)(void* host, portico_str name, portico_str value);
  void (*add_header)(void* host, portico_str name, portico_str value);
  void (*remove_header)(void* host, portico_str name);
  void (*set_path)(void* host, portico_str path);
  void (*set_authority)(void* host, portico_str authority);
  /* Turns the exchange into a local response; the hook then returns PORTICO_FILTER_RESPOND. */
  void (*respond)(void* host, int status, portico_str body);
  /* ---- ABI 1.2 (check PORTICO_HAS_FIELD before use) */
  /* Header iteration: count, and the i-th (name, value) in order; 1 when i < count. */
  size_t (*header_count)(void* host);
  int (*header_at)(void* host, size_t i, portico_str* name, portico_str* value);
  /* The raw query (without '?'), and the n-th value of query parameter `name` (exact,
   * percent-decoded name and value; '+' read as space); 1 when present. */
  portico_str (*query)(void* host);
  int (*query_param)(void* host, portico_str name, size_t n, portico_str* value);
  /* The client's address, the route ("namespace/name") and rule name ("" when unnamed). */
  portico_str (*client_address)(void* host);
  portico_str (*route)(void* host);
  portico_str (*rule_name)(void* host);
  /* Adds a header to the local reply that respond() sets (before or after respond, same hook). */
  void (*reply_header)(void* host, portico_str name, portico_str value);
} portico_http_view;

/* portico_http_call: an outbound request through the host's async HTTP client. Every member is
 * borrowed for the duration of http_call() only (the host copies). */
typedef struct portico_http_call {
  size_t struct_size;
  portico_str method;
  portico_str url;         /* http://host:port/path (an IP literal host) */
  portico_str headers;     /* "Name: value\r\n" lines */
  portico_str body;
  int64_t timeout_ms;
  /* ---- ABI 1.2: a backend key "namespace/service:port" instead of the url's host and port
   * (endpoints and balancing as for route backends); the url then gives only the path. */
  portico_str backend;
} portico_http_call;

/* portico_http_done_fn: completion of an outbound call, on the worker that issued it, exactly
 * once unless the exchange ended first (then the type's `cancel` hook gets the cookie instead).
 * status 0 means the call failed (reason in body). `headers` are "Name: value\r\n" lines;
 * `headers`, `body` and `view` are valid during this call only. The cookie is the plugin's: the
 * host never frees or reads it. The result continues the chain as a hook's would. */
typedef portico_filter_status (*portico_http_done_fn)(void* cookie, int status,
                                                      portico_str headers, portico_str body,
                                                      const portico_http_view* view);

/* portico_filter_host: services a filter instance may use on the request path. Valid during the
 * hook call that received it. */
typedef struct portico_filter_host {
  size_t struct_size;
  void* host;
  /* Starts an outbound call; the hook returns PORTICO_FILTER_PENDING and `done` runs later. At
   * most one call per request and filter at a time. Not PORTICO_OK: nothing was started and
   * `done` is never called. */
  portico_code (*http_call)(void* host, const portico_http_call* call, portico_http_done_fn done,
                            void* cookie);
  void (*log)(void* host, portico_log_level level, portico_str message);
  /* ---- ABI 1.2: this request's state for this filter (what request_create made; NULL when
   * the type has no request_create). Owned by the plugin, freed in request_destroy. */
  void* request_state;
  /* ---- ABI 1.3 (check PORTICO_HAS_FIELD): a monotonic clock in milliseconds (arbitrary
   * epoch, never goes back), the one a filter measures time with (token buckets, windows), so
   * the fake host's clock drives it under test. Cheap; callable from any request hook. */
  int64_t (*now_monotonic_ms)(void* host);
} portico_filter_host;

/* portico_filter_type: a filter a kind provides, instantiated from its config JSON (the
 * referenced object's synced view). Instances are created and destroyed off the request path
 * (create when a configuration is prepared, destroy when no snapshot uses it any more); the
 * instance pointer is the plugin's, shared by every worker: hooks run concurrently on it.
 * Threading: every request hook runs on the worker that owns the request and must not block. */
typedef struct portico_filter_type {
  size_t struct_size;
  portico_str name;        /* e.g. "portico.io/Webhook" */
  portico_filter_phase phase;
  int32_t order;           /* order key within the phase */
  void* user;
  portico_code (*create)(void* user, portico_str config_json, void** instance,
                         portico_sink* error);
  void (*destroy)(void* user, void* instance);
  portico_filter_status (*on_request)(void* instance, const portico_http_view* request,
                                      const portico_filter_host* host);
  portico_filter_status (*on_response)(void* instance, const portico_http_view* response,
                                       const portico_filter_host* host);
  /* ---- ABI 1.2 (a 1.1 plugin's struct ends above: the host checks struct_size) */
  /* Per-request state: created when a request reaches the filter, destroyed when it ends. */
  void* (*request_create)(void* instance);
  void (*request_destroy)(void* instance, void* state);
  /* The request ended while an outbound call of this filter was in flight: `done` will not run;
   * free the cookie here. */
  void (*cancel)(void* instance, void* state, void* cookie);
  /* After every on_request, just before the request head goes upstream. */
  portico_filter_status (*on_upstream_request)(void* instance, const portico_http_view* request,
                                               const portico_filter_host* host);
  /* The exchange ended (after the response, or when the client went away). */
  void (*on_log)(void* instance, const portico_http_view* request, const portico_filter_host* host);
  /* Reserved for body hooks; must be NULL. */
  void* on_request_body;
  void* on_response_body;
} portico_filter_type;

/* ---------------------------------------------------------------- kinds and plugins */

/* portico_kind_scope: namespaced or cluster-scoped. */
typedef enum portico_kind_scope { PORTICO_SCOPE_NAMESPACED = 0, PORTICO_SCOPE_CLUSTER = 1 } portico_kind_scope;

/* Capability bits of a kind. */
#define PORTICO_CAP_PROCESSOR 0x1u
#define PORTICO_CAP_SYNC 0x2u
#define PORTICO_CAP_HANDLER 0x4u
#define PORTICO_CAP_ROUTE_FILTER 0x8u
#define PORTICO_CAP_POLICY_TARGET 0x10u
#define PORTICO_CAP_REFERENCE_POLICY 0x20u

/* portico_kind: one kind a plugin registers. Lists are comma-separated strings
 * ("v1,v1beta1"); `reads` names the kinds this kind's processor reads, each as "Kind.group"
 * ("Gateway.gateway.networking.k8s.io"), or "Kind" alone for the core group ("Secret"). */
typedef struct portico_kind {
  size_t struct_size;
  portico_str group; /* "" for the core group (Secret, Service, Namespace) */
  portico_str kind;
  portico_str versions;
  portico_str plural;
  portico_str short_names;
  portico_kind_scope scope;
  portico_str schema; /* JSON Schema draft-04 of the whole object */
  portico_str reads;
  uint32_t capabilities;
  portico_sync_policy sync_policy;
  void* user;
  portico_process_fn process;     /* may be NULL: objects are stored as given */
  portico_stage_fn stage;         /* may be NULL: no gateway handler */
} portico_kind;

/* portico_reference_policy: answers "may `from` reference `to`?". It reads through `ctx` so the
 * asking object is requeued when the grants it depended on change. */
typedef struct portico_reference_policy {
  size_t struct_size;
  void* user;
  int (*allowed)(void* user, const portico_process_context* ctx, portico_str from_group,
                 portico_str from_kind, portico_str from_ns, const portico_object_ref* to);
} portico_reference_policy;

/* portico_registrar: the host's registration interface, valid only during register_plugin().
 * The host copies everything it is given. */
typedef struct portico_registrar {
  size_t struct_size;
  void* host;
  portico_code (*add_kind)(void* host, const portico_kind* kind, portico_sink* error);
  portico_code (*add_filter_type)(void* host, const portico_filter_type* type,
                                  portico_sink* error);
  portico_code (*set_reference_policy)(void* host, const portico_reference_policy* policy,
                                       portico_sink* error);
  void (*log)(void* host, portico_log_level level, portico_str message);
} portico_registrar;

/* portico_plugin_v1_descriptor: what `portico_plugin_v1()` returns; static storage. */
typedef struct portico_plugin_v1_descriptor {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  portico_str name;
  portico_str version;
  portico_str sdk_version;
  /* Registers the plugin's kinds, filters and policies; error message into `error`. */
  portico_code (*register_plugin)(const portico_registrar* registrar, portico_sink* error);
} portico_plugin_v1_descriptor;

typedef const portico_plugin_v1_descriptor* (*portico_plugin_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PORTICO_SDK_ABI_H_ */
