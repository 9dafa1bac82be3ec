// Whether a directory is safe for what a root daemon keeps in it (its socket, its lease journal),
// checked along the whole path, as OpenSSH's StrictModes does.
//
// Whoever can write any directory on the way to a file can rename that directory away and put
// their own in its place, with their own socket or journal inside. So the directory and every
// ancestor, from / down — including each directory a symbolic link on the way leads through —
// must be a directory owned by root or by the trusted user (zeusd's own), writable by its owner
// only. One exception, for /tmp and the like: an ancestor writable by others but with the sticky
// bit set is accepted when the entry inside it on the way is owned by root or the trusted user
// (the sticky bit stops others from renaming or removing that entry). The directory itself must
// never be writable by others, sticky or not. ACLs are not read.
// Thread-safety: reads the file system only; callable from any thread.
//
//   if (auto bad = zeus::zeusd::find_untrusted_path_entry("/run/zeusd", geteuid()))
//     die(bad->path + " " + bad->why + "; " + bad->fix);
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace zeus::zeusd {

// The entry on the way that makes a directory unsafe.
struct UntrustedPathEntry {
  std::string path;  // "/tmp/w/bobdir": the directory (or entry in a sticky one) at fault
  std::string why;   // "is owned by uid 65534, not root", "is writable by everyone (mode 0777)"
  std::string fix;   // "chown root /tmp/w/bobdir", "chmod go-w /tmp/w/bobdir"
};

// The first entry, from / down, that makes `directory` unsafe (see above); nullopt when it is
// safe. A relative `directory` is taken from the working directory. `trusted_uid` may own
// entries besides root.
std::optional<UntrustedPathEntry> find_untrusted_path_entry(const std::string& directory,
                                                            uid_t trusted_uid);

}  // namespace zeus::zeusd
