// Opening the batch-size optimizer's Store from the URL `zeus serve --db` takes: the store
// factory (zeus/store/store_factory.h: memory://, sqlite://PATH, postgresql://..., mysql://...),
// after creating the parent folders of an SQLite file. default_store_url() is sqlite:// under
// $XDG_DATA_HOME/zeus/bso.db, else ~/.local/share/zeus/bso.db. Thread-safety: none needed.
// Failure: kInvalidArgument for an
// unknown scheme, the store's errors otherwise.
//
//   Result<std::unique_ptr<Store>> store = server::open_store_url(server::default_store_url());
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus::server {

// max_connections: PostgreSQL or MySQL connections kept open (the server's worker count).
Result<std::unique_ptr<Store>> open_store_url(const std::string& url, int max_connections = 8);

std::string default_store_url();

}  // namespace zeus::server
