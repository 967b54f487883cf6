/// \file
/// Atomic file output (the labeldp CLI contract, "Common rules", writing): an output file appears
/// under its final name only when complete, replaces only a regular file (keeping its mode), and
/// an interrupted run leaves neither a partial output nor a temporary file behind.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace labeldp::io {

namespace detail {

/// Temporary files that a signal handler must remove: a fixed table of pointers to the writers'
/// own path strings, so the handler only reads atomics and calls unlink(2) (both
/// async-signal-safe). A writer registers its path before the file exists and unregisters it
/// before the string is freed.
struct TemporaryFiles {
  static constexpr std::size_t kSlots = 64;
  static std::array<std::atomic<const char*>, kSlots>& slots() {
    static std::array<std::atomic<const char*>, kSlots> s{};
    return s;
  }
  /// \return the slot taken, or kSlots when the table is full (the file is then not removed on
  ///         a signal; more than 64 simultaneous writers is not a use this library has).
  static std::size_t add(const char* path) {
    auto& s = slots();
    for (std::size_t i = 0; i < kSlots; ++i) {
      const char* expected = nullptr;
      if (s[i].compare_exchange_strong(expected, path)) return i;
    }
    return kSlots;
  }
  static void remove(std::size_t slot) {
    if (slot < kSlots) slots()[slot].store(nullptr);
  }
  /// Unlinks every registered file (async-signal-safe).
  static void unlink_all() {
    for (auto& p : slots()) {
      const char* path = p.exchange(nullptr);
      if (path) ::unlink(path);
    }
  }
};

extern "C" inline void labeldp_remove_temporaries_and_reraise(int sig) {
  TemporaryFiles::unlink_all();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

inline std::string errno_text(int err) { return err ? std::strerror(err) : "unknown error"; }

}  // namespace detail

/// Makes SIGINT, SIGTERM and SIGHUP remove every AtomicFileWriter's temporary file before the
/// process ends by the signal, as it would have without the handler. A program calls it once,
/// at start (the labeldp CLI does); a signal whose disposition is not the default (the program
/// handles or ignores it) is left alone, so the library never overrides a program's own
/// handling. Idempotent.
inline void remove_temporaries_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = detail::labeldp_remove_temporaries_and_reraise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    ::sigaction(sig, &sa, nullptr);
  }
}

/// An output file that appears under its final name only when complete: text goes to a
/// temporary file in the same directory (same file system, so the final rename is atomic), and
/// commit() flushes it to disk (fsync) and renames it over `path`. If the writer is destroyed
/// without commit() — an error happened — the temporary file is removed and `path` is left
/// untouched, so readers never see a partially written file; after
/// remove_temporaries_on_signals() the same holds for SIGINT, SIGTERM and SIGHUP.
///
/// `path` may be a new file or a regular file, which is replaced with its permission bits kept;
/// a symbolic link is followed (the file it names is replaced, the link stays). A directory,
/// FIFO, device or socket is refused: replacing it by a regular file is never what was meant.
///
/// \code{.cpp}
/// labeldp::io::AtomicFileWriter out("labels.txt");
/// out.write("1.5\n");
/// out.commit();
/// \endcode
class AtomicFileWriter {
 public:
  /// Creates the temporary file next to `path` (next to the file a symbolic link names).
  /// \throws std::invalid_argument "path: cannot write file: <reason>".
  explicit AtomicFileWriter(std::string path) : m_path(std::move(path)) {
    namespace fs = std::filesystem;
    fs::path target(m_path);
    if (target.filename().empty()) fail("not a file name");
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(target, ec))) {
      const fs::path resolved = fs::weakly_canonical(target, ec);
      if (ec) fail("cannot resolve the symbolic link: " + ec.message());
      target = resolved;
    }
    m_target = target.string();
    mode_t mode = 0666;
    bool keep_mode = false;
    struct stat st {};
    if (::stat(m_target.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) fail("it is a directory");
      if (!S_ISREG(st.st_mode))
        fail(std::string("it is not a regular file (") +
             (S_ISFIFO(st.st_mode)   ? "a FIFO"
              : S_ISSOCK(st.st_mode) ? "a socket"
                                     : "a device") +
             "); only a regular file is replaced");
      mode = st.st_mode & 07777;
      keep_mode = true;
    } else if (errno != ENOENT) {
      fail(detail::errno_text(errno));
    }
    for (int attempt = 0; attempt < 16 && m_fd < 0; ++attempt) {
      std::uint64_t r = 0;
      if (::getrandom(&r, sizeof r, 0) != ssize_t(sizeof r))
        r ^= std::uint64_t(::getpid()) * 0x9E3779B97F4A7C15ull + attempt;
      // Built with append(): GCC 12 misreports operator+ chains here (-Wrestrict, PR 105329).
      std::string name(".");
      name.append(target.filename().string()).append(".tmp-").append(std::to_string(r));
      m_tmp = (target.parent_path() / name).string();
      m_slot = detail::TemporaryFiles::add(m_tmp.c_str());
      // O_EXCL: fail rather than reuse an existing file; the umask applies to a new file.
      m_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, keep_mode ? 0600 : mode);
      if (m_fd < 0) {
        const int err = errno;
        detail::TemporaryFiles::remove(m_slot);
        m_slot = detail::TemporaryFiles::kSlots;
        if (err != EEXIST) fail(detail::errno_text(err));
      }
    }
    if (m_fd < 0) fail("cannot create a temporary file next to it");
    if (keep_mode && ::fchmod(m_fd, mode) != 0) {
      const int err = errno;
      discard();
      fail("cannot keep its mode: " + detail::errno_text(err));
    }
  }

  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  ~AtomicFileWriter() { discard(); }

  /// Appends `text`.
  /// \throws std::invalid_argument on a write error (disk full, ...).
  void write(std::string_view text) {
    if (m_fd < 0) fail("already committed");
    while (!text.empty()) {
      const ssize_t n = ::write(m_fd, text.data(), text.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(detail::errno_text(errno));
      }
      text.remove_prefix(std::size_t(n));
    }
  }

  /// Flushes to disk, closes and renames the temporary file to the final path.
  /// \throws std::invalid_argument when flushing or renaming fails (the temporary is removed).
  void commit() {
    if (m_fd < 0) fail("already committed");
    if (::fsync(m_fd) != 0) {
      const int err = errno;
      discard();
      fail(detail::errno_text(err));
    }
    const int fd = std::exchange(m_fd, -1);
    if (::close(fd) != 0) {
      const int err = errno;
      unlink_temporary();
      fail(detail::errno_text(err));
    }
    if (std::rename(m_tmp.c_str(), m_target.c_str()) != 0) {
      const int err = errno;
      unlink_temporary();
      fail(detail::errno_text(err));
    }
    detail::TemporaryFiles::remove(m_slot);
    m_slot = detail::TemporaryFiles::kSlots;
  }

  /// The final path, as given.
  const std::string& path() const { return m_path; }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw std::invalid_argument(m_path + ": cannot write file: " + reason);
  }
  void unlink_temporary() {
    detail::TemporaryFiles::remove(m_slot);
    m_slot = detail::TemporaryFiles::kSlots;
    ::unlink(m_tmp.c_str());
  }
  void discard() {
    if (m_fd < 0) return;
    ::close(std::exchange(m_fd, -1));
    unlink_temporary();
  }

  std::string m_path;    // as given (for messages)
  std::string m_target;  // the file replaced (a symbolic link resolved)
  std::string m_tmp;
  int m_fd = -1;
  std::size_t m_slot = detail::TemporaryFiles::kSlots;
};

/// Writes `text` to `path` atomically (temporary file in the same directory, then rename): the
/// file either keeps its old content or has exactly `text`.
/// \throws std::invalid_argument "path: cannot write file: <reason>".
inline void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFileWriter out(path);
  out.write(text);
  out.commit();
}

}  // namespace labeldp::io
