// openssl_util.cc: see openssl_util.h.
#include "core/runtime/tls/openssl_util.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

namespace portico::core::tls {

std::string OpenSslErrors(std::string_view fallback) {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string(fallback) : out;
}

std::string Sha256Fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (cert == nullptr || X509_digest(cert, EVP_sha256(), md, &length) != 1) return "";
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> out;
  auto* names = cert == nullptr ? nullptr
                                : static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(
                                      cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    const char* prefix = name->type == GEN_DNS     ? "DNS:"
                         : name->type == GEN_URI   ? "URI:"
                         : name->type == GEN_EMAIL ? "email:"
                                                   : nullptr;
    if (prefix != nullptr) {
      const ASN1_IA5STRING* text = name->d.ia5;
      out.push_back(prefix + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                                         static_cast<size_t>(ASN1_STRING_length(text))));
    } else if (name->type == GEN_IPADD) {
      char text[64] = {};
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof(text)) != nullptr) {
        out.push_back(std::string("IP:") + text);
      }
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace portico::core::tls
