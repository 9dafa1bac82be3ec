// _zeus_cpp._ZeusdConnection: one connection to a zeusd daemon (zeus::ZeusdClient, the project's
// HTTP layer) over its Unix socket or TCP with a bearer token, for zeus_cpp.utils.zeusd's
// ZeusdClient (upstream's typed client). request() answers a 2xx body as text and raises the
// ZeusError subclass of any other answer (zeus/zeusd_client/zeusd_client.h: 401/403
// PermissionDeniedError,
// 400 InvalidArgumentError, 404 NotFoundError, 409/503 UnavailableError) with zeusd's message.
// Over TCP, ensure_lease_session() opens the lease session that makes this process's changes
// restorable (zeus/zeusd_client/zeusd_client.h); the client's destructor closes it.
#include <memory>
#include <string>

#include "bindings.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus::python {

void bind_zeusd_client(py::module_& m) {
  py::class_<ZeusdClient, std::shared_ptr<ZeusdClient>>(
      m, "_ZeusdConnection",
      "One connection to zeusd: `socket_path`, or `host_port` (\"HOST:PORT\") with `token`.")
      .def(py::init([](const std::string& socket_path, const std::string& host_port,
                       const std::string& token) {
             if (!socket_path.empty()) {
               ZeusdEndpoint endpoint;
               endpoint.socket_path = socket_path;
               endpoint.token = token;
               return std::make_shared<ZeusdClient>(std::move(endpoint));
             }
             return std::make_shared<ZeusdClient>(unwrap(ZeusdEndpoint::tcp(host_port, token)));
           }),
           py::arg("socket_path") = "", py::arg("host_port") = "", py::arg("token") = "")
      .def_property_readonly(
          "endpoint", [](const ZeusdClient& c) { return c.endpoint().describe(); },
          "\"socket /run/zeusd/zeusd.sock\" or \"tcp HOST:PORT\".")
      .def(
          "request",
          [](ZeusdClient& c, const std::string& method, const std::string& target,
             const std::string& body) {
            return without_gil([&] { return c.request(method, target, body); });
          },
          py::arg("method"), py::arg("target"), py::arg("body") = "",
          "The 2xx answer's body (JSON text); a ZeusError subclass for any other answer.")
      .def(
          "ensure_lease_session",
          [](ZeusdClient& c) { without_gil([&] { return c.ensure_lease_session(); }); },
          "Over TCP: opens this process's lease session unless one is open (later requests name "
          "it, a background thread heart-beats it), so zeusd restores this process's changes "
          "when it stops. Nothing on the Unix socket.")
      .def_property_readonly(
          "lease_session", [](const ZeusdClient& c) { return c.lease_session(); },
          "The open lease session's id (\"\" when none).")
      .def(
          "close_lease_session",
          [](ZeusdClient& c) {
            py::gil_scoped_release release;
            c.close_lease_session();
          },
          "Closes the lease session: zeusd restores its changes now.");
}

}  // namespace zeus::python
