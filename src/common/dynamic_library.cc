#include "common/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

namespace zeus {

Result<DynamicLibrary> DynamicLibrary::open(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(ErrorCode::kUnavailable,
                "cannot load " + path + ": " + (why != nullptr ? why : "unknown dlopen error"));
  }
  return DynamicLibrary(handle, path);
}

std::string DynamicLibrary::loaded_file() const {
  link_map* map = nullptr;
  if (handle_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr || map->l_name[0] == '\0') {
    return path_;
  }
  std::error_code error;
  const auto resolved = std::filesystem::canonical(map->l_name, error);
  return error ? std::string(map->l_name) : resolved.string();
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(other.handle_), path_(std::move(other.path_)) {
  other.handle_ = nullptr;
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = other.handle_;
    path_ = std::move(other.path_);
    other.handle_ = nullptr;
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<void*> DynamicLibrary::raw_symbol(const std::string& name) const {
  void* address = find(name);
  if (address == nullptr) {
    return fail(ErrorCode::kNotSupported,
                "function not found: " + name + " is missing from " + path_ +
                    " (the driver is older than this feature)");
  }
  return address;
}

void* DynamicLibrary::find(const std::string& name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name.c_str());
}

}  // namespace zeus
