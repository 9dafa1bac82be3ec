// `zeusd token issue`: prints a bearer token signed with zeusd's key (jwt_token.h).
#include <ctime>
#include <iostream>

#include "serve_config.h"
#include "zeusd/jwt_token.h"
#include "zeusd/request_gate.h"

namespace zeus::zeusd_cli {

void add_token_issue_options(CLI::App& app, TokenIssueConfig& c) {
  app.add_option("--signing-key-path", c.signing_key_path,
                 "The key file zeusd serve reads (its raw bytes sign the token)")
      ->required();
  app.add_option("--user", c.user, "Who the token names (its `sub`: logs, whoami, /leases)")
      ->required();
  app.add_option("--scope", c.scope,
                 "API groups it grants, comma-separated: gpu-control, gpu-read, cpu-read")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->required();
  app.add_option("--expires", c.expires,
                 "Lifetime: e.g. 1h, 7d, 30d, '1h 30m' (checked with 60 s of leeway); 0 or never: "
                 "no expiry (dangerous: prefer a lifetime)")
      ->required();
  app.footer(
      "Example:\n"
      "  zeusd token issue --signing-key-path /etc/zeusd/signing.key --user alice \\\n"
      "      --scope gpu-read,cpu-read --expires 30d\n"
      "The token is printed on stdout; clients send it as 'Authorization: Bearer <token>' "
      "(Zeus: ZEUSD_TOKEN=<token>).");
}

int run_token_issue(const TokenIssueConfig& c) {
  auto key = zeusd::read_signing_key(c.signing_key_path);
  if (!key) {
    std::cerr << "zeusd: " << key.error().message << "\n";
    return 1;
  }
  auto groups = zeusd::parse_enabled_groups(c.scope);
  auto lifetime = zeusd::parse_token_lifetime(c.expires);
  if (!groups || !lifetime) {
    std::string message = !groups ? groups.error().message : lifetime.error().message;
    if (message.rfind("--enable", 0) == 0) message.replace(0, 8, "--scope");
    std::cerr << "zeusd: " << message << "\n";
    return 2;
  }
  zeusd::TokenIdentity identity;
  identity.subject = c.user;
  for (int g = 0; g < zeusd::kCapabilityCount; ++g) {
    if ((*groups)[static_cast<size_t>(g)]) identity.scopes.push_back(static_cast<zeusd::Capability>(g));
  }
  if (*lifetime) {
    identity.expires_unix_s = static_cast<int64_t>(std::time(nullptr)) + **lifetime;
  } else {
    // Said on stderr, so that the token on stdout can still be captured alone.
    std::cerr << "zeusd: warning: this token never expires (--expires " << c.expires
              << "): it works until the signing key changes; prefer a lifetime such as 30d\n";
  }
  auto token = zeusd::issue_token(*key, identity);
  if (!token) {
    std::cerr << "zeusd: " << token.error().message << "\n";
    return 1;
  }
  std::cout << *token << "\n";
  return 0;
}

}  // namespace zeus::zeusd_cli
