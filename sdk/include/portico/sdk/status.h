// status.h: Status and StatusOr<T>, the error currency of Portico (Abseil-style, gRPC codes).
//
// Header-only and std-only so plugins compile it into themselves; the codes are the C ABI's
// portico_code values, so a Status crosses the plugin boundary as (code, message).
// Thread-safety: value types; no shared state.
#ifndef PORTICO_SDK_STATUS_H_
#define PORTICO_SDK_STATUS_H_

#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "portico/sdk/abi.h"

namespace portico {

// StatusCode mirrors portico_code.
enum class StatusCode : int {
  kOk = PORTICO_OK,
  kCancelled = PORTICO_CANCELLED,
  kUnknown = PORTICO_UNKNOWN,
  kInvalidArgument = PORTICO_INVALID_ARGUMENT,
  kDeadlineExceeded = PORTICO_DEADLINE_EXCEEDED,
  kNotFound = PORTICO_NOT_FOUND,
  kAlreadyExists = PORTICO_ALREADY_EXISTS,
  kPermissionDenied = PORTICO_PERMISSION_DENIED,
  kResourceExhausted = PORTICO_RESOURCE_EXHAUSTED,
  kFailedPrecondition = PORTICO_FAILED_PRECONDITION,
  kAborted = PORTICO_ABORTED,
  kOutOfRange = PORTICO_OUT_OF_RANGE,
  kUnimplemented = PORTICO_UNIMPLEMENTED,
  kInternal = PORTICO_INTERNAL,
  kUnavailable = PORTICO_UNAVAILABLE,
  kDataLoss = PORTICO_DATA_LOSS,
  kUnauthenticated = PORTICO_UNAUTHENTICATED,
};

// StatusCodeName returns the canonical upper-case name ("INVALID_ARGUMENT").
inline std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

// Status is a code plus a message naming the object and field at fault.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // ToString renders "CODE: message" ("OK" when ok).
  std::string ToString() const {
    if (ok()) return "OK";
    std::string out(StatusCodeName(code_));
    out += ": ";
    out += message_;
    return out;
  }

  // WithPrefix returns this status with "prefix: " before the message (context as it bubbles up).
  Status WithPrefix(std::string_view prefix) const {
    if (ok()) return *this;
    return Status(code_, std::string(prefix) + ": " + message_);
  }

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }
  friend std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status OutOfRangeError(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status PermissionDeniedError(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status AbortedError(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }

// StatusOr<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit like absl::StatusOr
    if (status_.ok()) status_ = InternalError("StatusOr constructed from an OK status without value");
  }
  StatusOr(Status&& status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = InternalError("StatusOr constructed from an OK status without value");
  }
  StatusOr(const T& value) : value_(value) {}        // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  const T& value() const& { assert(ok()); return *value_; }
  T& value() & { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace portico

// PORTICO_RETURN_IF_ERROR(expr): returns the Status of `expr` when it is not OK.
#define PORTICO_RETURN_IF_ERROR(expr)              \
  do {                                             \
    ::portico::Status portico_status_ = (expr);    \
    if (!portico_status_.ok()) return portico_status_; \
  } while (0)

#define PORTICO_CONCAT_INNER_(a, b) a##b
#define PORTICO_CONCAT_(a, b) PORTICO_CONCAT_INNER_(a, b)
// PORTICO_ASSIGN_OR_RETURN(lhs, expr): unwraps a StatusOr or returns its Status.
#define PORTICO_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto PORTICO_CONCAT_(portico_sor_, __LINE__) = (expr);                      \
  if (!PORTICO_CONCAT_(portico_sor_, __LINE__).ok())                          \
    return PORTICO_CONCAT_(portico_sor_, __LINE__).status();                  \
  lhs = std::move(PORTICO_CONCAT_(portico_sor_, __LINE__)).value()

#endif  // PORTICO_SDK_STATUS_H_
