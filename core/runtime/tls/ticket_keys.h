// ticket_keys.h: TicketKeys, the process's TLS session-ticket keys (RFC 5077 tickets, TLS 1.3
// stateless PSK tickets): one key encrypts new tickets, the previous ones still decrypt, and
// the encrypting key rotates every kRotation (checked lazily at each ticket operation), so a
// stolen key opens at most kLifetime of sessions. Every ServerContext installs Callback(), so a
// ticket issued under one certificate resumes under another of the process (as nginx with one
// ssl_session_ticket_key for all servers).
//
// Thread-safety: Callback may run on every worker at once (a mutex guards the ring; it is taken
// once per full handshake or resumption, never per record). Ownership: a process-wide
// singleton, never destroyed.
#ifndef PORTICO_CORE_RUNTIME_TLS_TICKET_KEYS_H_
#define PORTICO_CORE_RUNTIME_TLS_TICKET_KEYS_H_

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>

namespace portico::core::tls {

class TicketKeys {
 public:
  static constexpr std::chrono::hours kRotation{12};
  static constexpr size_t kKept = 2;  // keys kept for decryption besides the current one
  static constexpr std::chrono::hours kLifetime = kRotation * (kKept + 1);

  static TicketKeys& Instance();

  // Callback is OpenSSL's SSL_CTX_set_tlsext_ticket_key_evp_cb hook.
  static int Callback(SSL* ssl, unsigned char key_name[16], unsigned char* iv,
                      EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt);

  // Rotate makes a new encrypting key now (tests; the schedule does it otherwise).
  void Rotate();
  // Generations counts the keys made so far (tests).
  uint64_t generations() const;

 private:
  struct Key {
    std::array<unsigned char, 16> name;
    std::array<unsigned char, 32> aes;
    std::array<unsigned char, 32> hmac;
    std::chrono::steady_clock::time_point made;
  };
  TicketKeys();
  void RotateLocked(std::chrono::steady_clock::time_point now);

  mutable std::mutex mu_;
  std::deque<Key> keys_;  // front: the current key
  uint64_t generations_ = 0;
};

}  // namespace portico::core::tls

#endif  // PORTICO_CORE_RUNTIME_TLS_TICKET_KEYS_H_
