// The TLS side of HttpClient::tls (client.cc): the OpenSSL context every connection of one client
// shares (TLS 1.2 at least, peer verification on, the system's CA store plus an optional CA file),
// the per-connection settings (SNI and the name the certificate must carry), and the text of a
// handshake failure (the certificate's problem and how to trust a private CA).
// Thread-safety: make_tls_context is pure but for reading ca_file; the context it answers may be
// shared by connections on many threads (OpenSSL contexts are, once set up).
//
//   auto context = detail::make_tls_context("");  // the system's CAs
//   ZEUS_TRY(detail::expect_peer(stream.native_handle(), "api.example.org"));
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "zeus/common/result.h"

namespace zeus::http::detail {

// kInvalidArgument naming the file when ca_file (non-empty) is not readable PEM certificates;
// kUnavailable when OpenSSL cannot set up a context at all.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const std::string& ca_file);

// Sends `host` as SNI (a name, not an IP address) and makes the handshake fail unless the
// server's certificate is for `host` (a DNS name, or an IP address in its subjectAltName).
Result<void> expect_peer(SSL* ssl, const std::string& host);

// Why a handshake failed: the certificate's verify result ("certificate verify failed:
// self-signed certificate", "... hostname mismatch") with the fix for those, else the error's text.
std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec);

}  // namespace zeus::http::detail
