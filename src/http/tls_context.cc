// make_tls_context, expect_peer and handshake_failure (http/tls_context.h).
#include "http/tls_context.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/system/system_error.hpp>

namespace zeus::http::detail {

Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const std::string& ca_file) {
  namespace ssl = boost::asio::ssl;
  std::shared_ptr<ssl::context> context;
  try {
    context = std::make_shared<ssl::context>(ssl::context::tls_client);
  } catch (const boost::system::system_error& e) {
    return fail(ErrorCode::kUnavailable, std::string("cannot set up TLS: ") + e.what());
  }
  if (SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1) {
    return fail(ErrorCode::kUnavailable, "cannot set up TLS: no TLS 1.2 or newer in OpenSSL");
  }
  context->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  // A system without a CA store still works with ca_file alone; the handshake names the problem.
  context->set_default_verify_paths(ec);
  if (!ca_file.empty()) {
    context->load_verify_file(ca_file, ec);
    if (ec) {
      return fail(ErrorCode::kInvalidArgument,
                  "CA file '" + ca_file + "' (ca_file / ZEUS_CA_FILE) cannot be read as PEM "
                  "certificates: " + ec.message() + "; give a readable PEM file of CA certificates");
    }
  }
  return context;
}

Result<void> expect_peer(SSL* ssl, const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  const bool is_ip = !ec;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  int set = 0;
  if (is_ip) {
    set = X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    set = X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    // SNI is for names only (RFC 6066 §3).
    if (set == 1) set = static_cast<int>(SSL_set_tlsext_host_name(ssl, host.c_str()));
  }
  if (set != 1) {
    return fail(ErrorCode::kInvalidArgument, "cannot verify TLS server '" + host +
                                                 "': not a host name or IP address OpenSSL accepts");
  }
  return ok();
}

std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec) {
  const long verify = SSL_get_verify_result(ssl);
  if (verify == X509_V_OK) return ec.message();
  return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify) +
         "; if the server's certificate comes from a private CA, trust that CA with "
         "ZEUS_CA_FILE=/path/to/ca.pem (ClientOptions::ca_file), and reach the server by a name "
         "its certificate carries";
}

}  // namespace zeus::http::detail
