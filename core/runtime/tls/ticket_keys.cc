// ticket_keys.cc: see ticket_keys.h.
#include "core/runtime/tls/ticket_keys.h"

#include <openssl/core_names.h>
#include <openssl/rand.h>

#include <cstring>

namespace portico::core::tls {

TicketKeys& TicketKeys::Instance() {
  static TicketKeys* keys = new TicketKeys();  // never destroyed: workers may still handshake
  return *keys;
}

TicketKeys::TicketKeys() { RotateLocked(std::chrono::steady_clock::now()); }

void TicketKeys::RotateLocked(std::chrono::steady_clock::time_point now) {
  Key key;
  if (RAND_bytes(key.name.data(), key.name.size()) != 1 ||
      RAND_bytes(key.aes.data(), key.aes.size()) != 1 ||
      RAND_bytes(key.hmac.data(), key.hmac.size()) != 1) {
    return;  // keep the current key; the next operation tries again
  }
  key.made = now;
  keys_.push_front(key);
  while (keys_.size() > kKept + 1) keys_.pop_back();
  ++generations_;
}

void TicketKeys::Rotate() {
  std::lock_guard lock(mu_);
  RotateLocked(std::chrono::steady_clock::now());
}

uint64_t TicketKeys::generations() const {
  std::lock_guard lock(mu_);
  return generations_;
}

int TicketKeys::Callback(SSL*, unsigned char key_name[16], unsigned char* iv,
                         EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt) {
  TicketKeys& self = Instance();
  const auto now = std::chrono::steady_clock::now();
  Key key;
  bool renew = false;
  {
    std::lock_guard lock(self.mu_);
    if (self.keys_.empty() || now - self.keys_.front().made >= kRotation) self.RotateLocked(now);
    if (self.keys_.empty()) return -1;
    if (encrypt) {
      key = self.keys_.front();
    } else {
      auto found = self.keys_.begin();
      while (found != self.keys_.end() &&
             std::memcmp(found->name.data(), key_name, found->name.size()) != 0) {
        ++found;
      }
      if (found == self.keys_.end()) return 0;  // unknown or retired key: full handshake
      key = *found;
      renew = found != self.keys_.begin();  // issue a ticket under the current key
    }
  }
  if (encrypt) {
    if (RAND_bytes(iv, EVP_CIPHER_get_iv_length(EVP_aes_256_cbc())) != 1) return -1;
    std::memcpy(key_name, key.name.data(), key.name.size());
    if (EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) return -1;
  } else if (EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) {
    return -1;
  }
  char digest[] = "sha256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key.hmac.data(), key.hmac.size()),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end()};
  if (EVP_MAC_CTX_set_params(mac, params) != 1) return -1;
  return renew ? 2 : 1;
}

}  // namespace portico::core::tls
